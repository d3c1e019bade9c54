import CofferBackends
@_spi(Engine) public import CofferCore
import CofferRuntime
import Synchronization

/// Opens a folder to read its entries a batch at a time (``OpenedFolder``), as a program reads a
/// folder: what a file system's `opendir` asks (`coffer mount`). On a local mount the entries are
/// read from the folder as they are asked for, so a folder of 100,000 entries gives its first ones
/// at once and nothing holds all its names; storage that lists in pages (S3,
/// `PagedListingBackend`) is read a page at a time the same way, each entry with its item; other
/// storage gives its listing, read whole when the folder is opened, as ``ListFolderEntries`` reads it.
///
/// Fails with `noSuchFile` when nothing is there, `notADirectory` for a file.
public struct OpenFolder: FileOperation {
    public static let name = "openFolder"
    /// The folder opened.
    public var path: VirtualPath

    /// Opens the folder at `path`.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> OpenedFolder {
        let service = context.service
        let path = path
        let backend = try service.mount(for: path).backend
        if let local = backend as? LocalSandboxBackend {
            return OpenedFolder(try await BlockingIO.run { _ throws(CofferError) in try local.entryReader(at: path) })
        }
        if let paged = backend as? any PagedListingBackend {
            let open: @Sendable () async throws(CofferError) -> any FolderPages = {
                try await service.call(path) { try await paged.folderPages(at: path) }
            }
            return OpenedFolder(pages: try await open(), reopening: open)
        }
        let listing = try await service.entries(inFolder: path)
        return OpenedFolder(listed: listing.entries.enumerated().map { index, entry in
            OpenedFolder.Item(entry: entry, node: listing.nodes?[index])
        })
    }
}

/// A folder opened by ``OpenFolder``: its entries, a batch at a time, in the store's order,
/// without `.` and `..`. On a local mount each batch is read from the folder on the caller's
/// thread (blocking: the calling task's thread, not to be one of Swift's cooperative pool's
/// for long); from S3 a page is asked for when the entries before it have been taken. One
/// reader at a time. Whoever opened it closes it.
public final class OpenedFolder: Sendable {
    /// An entry, with its item where the listing gave it (S3's pages and other storage's
    /// listings do). A local folder's entries come without: their items are read by name
    /// (``StatItems``), as cheap there as the listing.
    public struct Item: Sendable {
        /// The entry: its name and kind.
        public var entry: FolderEntry
        /// What the storage said of it while listing, if anything.
        public var node: FileNode?

        /// The entry's name in its folder.
        public var name: String { entry.name }

        /// An entry and, when known, its item.
        public init(entry: FolderEntry, node: FileNode? = nil) { (self.entry, self.node) = (entry, node) }
    }

    private enum Source: Sendable {
        case reader(FolderEntryReader)
        case listed([Item])
        case pages(reopening: @Sendable () async throws(CofferError) -> any FolderPages)
    }

    private struct Paging {
        /// The listing being read; `nil` after a rewind, until the next batch opens it again.
        var pages: (any FolderPages)?
        /// Items of the pages read and not yet taken.
        var waiting: [FileNode] = []
        /// The last page has been read.
        var ended = false
        /// A page is being asked for (one at a time: the pages follow each other).
        var reading = false
        /// Counts the passes (each rewind and the close start a new one): a page that arrives for
        /// an earlier pass, after its caller stopped waiting, is dropped.
        var pass = 0
    }

    private enum Step {
        case ready
        case busy
        case read(pages: (any FolderPages)?, pass: Int)
    }

    private let source: Source
    /// Where the next batch of a listing read whole starts.
    private let position = Mutex(0)
    private let paging = Mutex(Paging())
    private let closed = Atomic<Bool>(false)

    init(_ reader: FolderEntryReader) { source = .reader(reader) }
    init(listed items: [Item]) { source = .listed(items) }
    init(pages: any FolderPages, reopening: @escaping @Sendable () async throws(CofferError) -> any FolderPages) {
        source = .pages(reopening: reopening)
        paging.withLock { $0.pages = pages }
    }

    /// Up to `count` more entries; none once the folder has been read through (a batch cut short
    /// by a failure to read is followed by a call that reports it).
    /// - Throws: `ioError` when the folder (or the store's next page) cannot be read,
    ///   `invalidOperation` once closed.
    public func next(_ count: Int) async throws(CofferError) -> [Item] {
        switch source {
        case .reader(let reader): return try reader.next(count).map { Item(entry: $0) }
        case .listed(let items):
            try requireOpen()
            return position.withLock { position in
                let start = min(position, items.count), end = min(items.count, start + max(0, count))
                position = end
                return Array(items[start..<end])
            }
        case .pages(let reopening):
            try requireOpen()
            reading: while true {
                let step = paging.withLock { paging -> Step in
                    if paging.waiting.count >= count || paging.ended { return .ready }
                    if paging.reading { return .busy }
                    paging.reading = true
                    return .read(pages: paging.pages, pass: paging.pass)
                }
                switch step {
                case .ready: break reading
                case .busy:
                    // A caller that stopped waiting (a timeout) left its page coming: it is taken
                    // when it arrives, never asked for twice.
                    throw CofferError(.ioError, detail: "the store has not yet answered for this folder's last page")
                case .read(let pages, let pass):
                    do throws(CofferError) {
                        let current: any FolderPages
                        if let pages { current = pages } else { current = try await reopening() }
                        let more: [FileNode]
                        do { more = try await current.nextPage() } catch { throw CofferError.wrapping(error) }
                        paging.withLock { paging in
                            guard paging.pass == pass else { return }
                            paging.reading = false
                            paging.pages = current
                            paging.waiting += more
                            if more.isEmpty { paging.ended = true }
                        }
                    } catch {
                        paging.withLock { paging in if paging.pass == pass { paging.reading = false } }
                        throw error
                    }
                }
            }
            return paging.withLock { paging in
                let taken = paging.waiting.prefix(max(0, count))
                paging.waiting.removeFirst(taken.count)
                return taken.map { Item(entry: FolderEntry(name: $0.name, kind: FolderEntry.Kind(of: $0), isHidden: $0.isHidden), node: $0) }
            }
        }
    }

    /// Starts again from the first entry (a local folder is read anew, S3's listing asked for
    /// again: what changed since shows).
    public func rewind() {
        switch source {
        case .reader(let reader): reader.rewind()
        case .listed: position.withLock { $0 = 0 }
        case .pages: paging.withLock { $0 = Paging(pass: $0.pass + 1) }
        }
    }

    /// Lets the folder go.
    public func close() {
        closed.store(true, ordering: .relaxed)
        if case .reader(let reader) = source { reader.close() }
        paging.withLock { $0 = Paging(pass: $0.pass + 1) }
    }

    private func requireOpen() throws(CofferError) {
        if closed.load(ordering: .relaxed) { throw CofferError(.invalidOperation, detail: "closed") }
    }
}
