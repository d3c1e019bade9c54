import CofferCore
import FileService
import Synchronization

/// A file or folder the kernel has open, under the number it was given in `open`, `create` or
/// `opendir`: what it reads and writes through.
final class OpenHandle: Sendable {
    /// What an open item holds.
    enum Content: Sendable {
        /// A local file opened for reading only.
        case reading(DirectFileReader)
        /// A file of storage without descriptors (S3), read in ranges.
        case remote(OpenedFile)
        /// A file opened for writing (and reading): a local one in place, another storage's as a
        /// copy on local disk.
        case updating(UpdatableFile)
        /// A folder being read, a batch at a time as the kernel asks.
        case folder(FolderWindow)
        /// The root of `--all`.
        case mounts
    }

    /// The inode it was opened as.
    let ino: UInt64
    private let content: Mutex<Content?>
    /// The file as this handle's last write left it (`nil` before it wrote), to tell whether the
    /// pages the kernel kept of those writes are still the file's when it is closed.
    private let written = Mutex<(happened: Bool, stamp: ContentStamp?)>((false, nil))

    init(ino: UInt64, _ content: Content) {
        self.ino = ino
        self.content = Mutex(content)
    }

    /// What it holds now; `nil` once closed.
    var current: Content? { content.withLock { $0 } }

    /// Whether it is a copy of a file of other storage with changes not yet sent there.
    var isUnsentCopy: Bool {
        if case .updating(let file)? = current { return file.hasUnsentChanges }
        return false
    }

    /// The copy on local disk it writes, for a file of other storage (``UpdatableFile/isStaged``).
    var stagedCopy: UpdatableFile? {
        if case .updating(let file)? = current, file.isStaged { return file }
        return nil
    }

    /// This handle wrote: `stamp` is the file as the write left it.
    func noteWritten(_ stamp: ContentStamp?) { written.withLock { $0 = (true, stamp) } }

    /// Whether this handle wrote, and the file as its last write left it (`nil`: unknown).
    var writes: (happened: Bool, stamp: ContentStamp?) { written.withLock { $0 } }

    /// Puts `new` in place of what it holds (a file emptied by a truncation is a new file:
    /// the handle writes to it from now on). What it held is not closed here: a call on
    /// another thread may be using it; it closes itself when the last user lets it go.
    func replace(with new: Content) {
        content.withLock { $0 = new }
    }

    /// Lets what it holds go without closing it: another handle still uses it.
    func detach() {
        content.withLock { $0 = nil }
    }

    func close() {
        let old = content.withLock { content in
            defer { content = nil }
            return content
        }
        old.map(Self.close)
    }

    private static func close(_ content: Content) {
        switch content {
        case .reading(let reader): reader.close()
        case .remote(let file): Task { await file.close() }
        case .updating(let file): file.close()
        case .folder(let window): window.close()
        case .mounts: break
        }
    }
}

extension Sequence {
    /// The first value `transform` gives (not `nil`), calling it once for each element up to
    /// that one. (A lazy `compactMap(…).first` calls it twice for the element it returns: what an
    /// open handle holds may change between the two, when another thread closes it.)
    func firstValue<T>(_ transform: (Element) throws -> T?) rethrows -> T? {
        for element in self {
            if let value = try transform(element) { return value }
        }
        return nil
    }
}
