import CofferBackends
@_spi(Engine) public import CofferCore
import CofferRuntime
import Synchronization

/// Opens a folder to read its entries a batch at a time (``OpenedFolder``), as a program reads a
/// folder: what a file system's `opendir` asks (`coffer mount`). On a local mount the entries are
/// read from the folder as they are asked for, so a folder of 100,000 entries gives its first ones
/// at once and nothing holds all its names; on other storage (S3) the listing is read whole when
/// the folder is opened, as ``ListFolderEntries`` reads it.
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
        if let local = try service.mount(for: path).backend as? LocalSandboxBackend {
            return OpenedFolder(try await BlockingIO.run { _ throws(CofferError) in try local.entryReader(at: path) })
        }
        return OpenedFolder(listed: try await service.entries(inFolder: path).entries)
    }
}

/// A folder opened by ``OpenFolder``: its entries, a batch at a time, in the store's order,
/// without `.` and `..`. On a local mount each batch is read from the folder on the caller's
/// thread (blocking: not one of Swift's cooperative pool). Whoever opened it closes it.
public final class OpenedFolder: Sendable {
    private enum Source: Sendable {
        case reader(FolderEntryReader)
        case listed([FolderEntry])
    }

    private let source: Source
    /// Where the next batch of a listing read whole starts.
    private let position = Mutex(0)

    init(_ reader: FolderEntryReader) { source = .reader(reader) }
    init(listed entries: [FolderEntry]) { source = .listed(entries) }

    /// Up to `count` more entries; none once the folder has been read through (a batch cut short
    /// by a failure to read is followed by a call that reports it).
    /// - Throws: `ioError` when the folder cannot be read, `invalidOperation` once closed.
    public func next(_ count: Int) throws(CofferError) -> [FolderEntry] {
        switch source {
        case .reader(let reader): return try reader.next(count)
        case .listed(let entries):
            return position.withLock { position in
                let start = min(position, entries.count), end = min(entries.count, start + max(0, count))
                position = end
                return Array(entries[start..<end])
            }
        }
    }

    /// Starts again from the first entry (a local folder is read anew: what changed since shows).
    public func rewind() {
        switch source {
        case .reader(let reader): reader.rewind()
        case .listed: position.withLock { $0 = 0 }
        }
    }

    /// Lets the folder go.
    public func close() {
        if case .reader(let reader) = source { reader.close() }
    }
}
