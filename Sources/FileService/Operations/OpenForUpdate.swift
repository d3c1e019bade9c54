@_spi(Engine) public import CofferCore
import CCofferSystem
import CofferRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Opens a file of a local mount for reading and writing in place, at any offset: what a file
/// system's `open(2)` asks (`coffer mount`). The front end then reads and writes through the
/// ``UpdatableFile`` on its own thread, as a program writes a file.
///
/// Coffer's meaning holds: a truncating open of a file with content (`O_TRUNC`) replaces it,
/// so the content is kept as one version (or moved to the trash where versions are not kept)
/// and a new, empty file is opened in its place; a new file appears empty at once, as
/// `O_CREAT` makes it.
///
/// On storage that cannot be written in place (an S3 mount), the file is opened as a copy on
/// local disk, made from the object when it is opened (``UpdatableFile/isStaged``): what is
/// written reaches the storage when ``SaveUpdatedFile`` sends it, as one conditional replace.
///
/// Fails with `noSuchFile` when nothing is there and `creating` is not set, `fileExists` when
/// something is and `exclusive` is, `isADirectory` for a folder, `unsupported` for a special
/// file or, on storage that is not a local folder, for a service without an uploads area,
/// `readOnly` on a read-only mount.
public struct OpenForUpdate: FileOperation {
    public static let name = "openForUpdate"
    public static let changesFiles = true

    /// The file opened.
    public var path: VirtualPath
    /// Makes an empty file when nothing is there.
    public var creating: Bool
    /// With `creating`, fails when something is there (`O_EXCL`).
    public var exclusive: Bool
    /// Empties the file first, keeping what it held as a version.
    public var truncating: Bool

    /// Opens the file at `path`.
    public init(_ path: VirtualPath, creating: Bool = false, exclusive: Bool = false, truncating: Bool = false) {
        self.path = path
        self.creating = creating
        self.exclusive = exclusive
        self.truncating = truncating
    }

    public func run(in context: OperationContext) async throws(CofferError) -> UpdatableFile {
        let service = context.service
        guard !path.isRoot else { throw CofferError(.isADirectory, path: path) }
        let backend = try service.writableMount(for: path).backend
        var existing: FileNode?
        do {
            existing = try await service.stat(path)
        } catch where error.kind == .noSuchFile {
            existing = nil
        }
        if let existing {
            if creating && exclusive { throw CofferError(.fileExists, path: path) }
            try existing.requireReadableFile()
        } else if !creating {
            throw CofferError(.noSuchFile, path: path)
        }
        guard let local = backend as? any LocalFolderBackend else {
            // Emptied or made in the copy, and sent when it is saved: one replace in the storage.
            return try await service.stagedCopy(of: existing, at: path, in: backend, emptying: truncating)
        }
        let path = path
        guard let existing else {
            // Made in place, empty, as `open(2)` with `O_CREAT` makes it (a name taken meanwhile
            // fails): nothing is there to keep, so no partial file and no flush are needed.
            let descriptor = try await BlockingIO.run { _ throws(CofferError) -> Int32 in
                try local.withParentFolder(of: path) { folder, name throws(CofferError) -> Int32 in
                    let made = openat(folder, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
                    guard made >= 0 else {
                        if errno == EEXIST { throw CofferError(.fileExists, path: path) }
                        throw CofferError.lastSystemError("openat", path: path)
                    }
                    return made
                }
            }
            await service.indexChanged([path])
            if let journal = ReplacedItems.current {
                // Noted as made, for undoing it, as every new file is.
                var change = ChangeDraft(kind: .create, path: path)
                change.state = (try? await service.stat(path))?.version?.description
                journal.note(change)
            }
            return UpdatableFile(descriptor: descriptor, path: path)
        }
        // Replaced by an empty file, as every replace is: what it held becomes a version.
        if truncating && existing.size > 0 { try await service.writeFile(path, bytes: [], conflict: .replace) }
        let descriptor = try await BlockingIO.run { _ throws(CofferError) -> Int32 in
            try local.withParentFolder(of: path) { folder, name throws(CofferError) -> Int32 in
                let opened = openat(folder, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
                guard opened >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
                var facts = stat()
                guard fstat(opened, &facts) == 0, facts.st_mode & S_IFMT == S_IFREG else {
                    _ = Glibc.close(opened)
                    throw CofferError(.unsupported, path: path, detail: Self.name)
                }
                return opened
            }
        }
        return UpdatableFile(descriptor: descriptor, path: path)
    }

    public func auditedPaths(for outcome: Result<UpdatableFile, CofferError>) -> [String] { [path.description] }
}

/// A local file open for reading and writing in place (``OpenForUpdate``), on the caller's
/// thread with `pread` and `pwrite`: it is the file that was opened, even if renamed since.
/// Errors name its path. Whoever opened it closes it.
///
/// A file of storage that cannot be written in place is a copy on local disk
/// (``isStaged``); ``SaveUpdatedFile`` sends what was written to the storage. Closed with
/// changes not yet sent, the copy stays, and ``FinishPendingSaves`` sends it later;
/// ``discard()`` drops them instead, and so does the end of a file nobody closed.
public final class UpdatableFile: @unchecked Sendable {
    private let descriptor: Int32
    private let closed = Mutex(false)
    /// The file's path when it was opened.
    public let path: VirtualPath
    /// The copy on local disk, for storage that cannot be written in place.
    let staging: StagedCopy?

    init(descriptor: Int32, path: VirtualPath, staging: StagedCopy? = nil) {
        self.descriptor = descriptor
        self.path = path
        self.staging = staging
    }

    /// Whether it is a copy on local disk of a file of other storage (S3), sent there by
    /// ``SaveUpdatedFile``.
    public var isStaged: Bool { staging != nil }

    /// Whether it is a copy with changes ``SaveUpdatedFile`` has not sent yet.
    public var hasUnsentChanges: Bool { staging?.hasUnsentChanges ?? false }

    /// Where a copy (``isStaged``) is sent: its path, or where a move or a conflict took it.
    public var destination: VirtualPath { staging?.state.withLock { $0.destination } ?? path }

    /// For a copy (``isStaged``): the file, or a folder holding it, was moved from `source` to
    /// `target` while open (a rename under `coffer mount`), so the copy is sent where it went.
    /// A local file, written in place, goes with its folder by itself.
    ///
    /// Returns whether the copy moved: then the caller gives it the file as it now is at
    /// ``destination`` with ``noteStored(as:)``, as a move may make the storage's object anew
    /// under another version (an S3 copy gives a new ETag).
    @discardableResult
    public func noteMoved(from source: VirtualPath, to target: VirtualPath) -> Bool {
        staging?.moved(from: source, to: target) ?? false
    }

    /// For a copy (``isStaged``) that was sent and then moved (``noteMoved(from:to:)``): `node`
    /// is the file now at ``destination``, holding what the copy last sent, so the next send
    /// replaces it (keeping no version) rather than taking it for a change made elsewhere.
    public func noteStored(as node: FileNode) {
        staging?.rebase(on: node)
    }

    /// For a copy (``isStaged``): the file was deleted while open, so what it holds, and what is
    /// written to it from now on, is never sent (as a program's writes to a deleted local file
    /// reach no name). A local file needs nothing.
    public func noteDeleted() {
        staging?.deleted()
    }

    /// ``noteDeleted()`` when the copy is sent to `path` (nothing for a local file).
    public func noteDeleted(at path: VirtualPath) {
        guard let staging, staging.state.withLock({ $0.destination == path }) else { return }
        staging.deleted()
    }

    /// Up to `buffer.count` bytes from `offset` into `buffer`: how many, 0 at the end.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(CofferError) -> Int {
        try retrying("pread") { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Writes all of `bytes` at `offset` (the file grows as needed); how many were written.
    public func write(at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws(CofferError) -> Int {
        var written = 0
        while written < bytes.count {
            let count = try retrying("pwrite") {
                pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset) + off_t(written))
            }
            if count == 0 { throw CofferError(.ioError, path: path, detail: "pwrite") }
            written += count
        }
        try staging?.changed()
        return written
    }

    /// Writes at `offset` with `body`, given the open descriptor and the offset, for data that is
    /// not in the process's memory (a FUSE write still in a pipe, spliced into the file). `body`
    /// is called once (what it consumed cannot be given again) and returns how many bytes it
    /// wrote, or -1 with `errno` set when it wrote none; it may write fewer than it was given (a
    /// full disk). The count is returned.
    public func write(at offset: Int64, using body: (_ descriptor: Int32, _ offset: Int64) -> Int) throws(CofferError) -> Int {
        guard !closed.withLock({ $0 }) else { throw CofferError(.invalidOperation, path: path, detail: "closed") }
        let written = body(descriptor, offset)
        if written < 0 { throw CofferError.lastSystemError("write", path: path) }
        try staging?.changed()
        return written
    }

    /// Sets the file's size: cut, or grown with zeros.
    public func resize(to size: Int64) throws(CofferError) {
        _ = try retrying("ftruncate") { Int(ftruncate(descriptor, off_t(size))) }
        try staging?.changed()
    }

    /// Reserves (or, with `mode`, punches or zeroes) space as `fallocate(2)` does.
    public func allocate(mode: Int32, offset: Int64, length: Int64) throws(CofferError) {
        _ = try retrying("fallocate") { Int(coffer_fallocate(descriptor, mode, offset, length)) }
        try staging?.changed()
    }

    /// Sets the file's modification time to `time`, seconds and nanoseconds since 1970 (`nil`:
    /// now), leaving its access time.
    public func setModificationTime(_ time: (seconds: Int, nanoseconds: Int)?) throws(CofferError) {
        // (UTIME_OMIT leaves the access time; UTIME_NOW is now.)
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2),
                     time.map { timespec(tv_sec: $0.seconds, tv_nsec: $0.nanoseconds) } ?? timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1)]
        _ = try retrying("futimens") { Int(futimens(descriptor, &times)) }
        try staging?.changed()
    }

    /// Makes what was written durable (`fdatasync` when `dataOnly`).
    public func synchronize(dataOnly: Bool) throws(CofferError) {
        _ = try retrying("fsync") { Int(dataOnly ? fdatasync(descriptor) : fsync(descriptor)) }
    }

    /// Runs `body` with the open descriptor (it stays this file's: not to be closed).
    public func withDescriptor<T>(_ body: (Int32) throws -> T) rethrows -> T { try body(descriptor) }

    /// Lets the descriptor go; later calls fail. Called again, it does nothing.
    public func close() { close(discarding: false) }

    /// Closes it, and drops what a copy (``isStaged``) holds unsent: for an open that failed, or
    /// a change that failed, whose effect must not reach the storage later. A local file is
    /// written in place: for it this is ``close()``.
    public func discard() { close(discarding: true) }

    private func close(discarding: Bool) {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first {
            // (The copy goes while its lock is held: no finishing takes it meanwhile.)
            staging?.release(discarding: discarding)
            _ = Glibc.close(descriptor)
        }
    }

    // Never closed by its owner: an open abandoned (its caller stopped waiting), whose copy is dropped.
    deinit { close(discarding: true) }

    private func retrying(_ call: StaticString, _ body: () -> Int) throws(CofferError) -> Int {
        guard !closed.withLock({ $0 }) else { throw CofferError(.invalidOperation, path: path, detail: "closed") }
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno != EINTR { throw CofferError.lastSystemError(call, path: path) }
        }
    }
}
