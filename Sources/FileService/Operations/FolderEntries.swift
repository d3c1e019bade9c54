public import CofferCore

/// The names in a folder, each with what it is (file, folder, other) and whether it is
/// hidden, unsorted: far less than ``ListFolder`` holds per item, so a folder of any size can
/// be gone through a batch at a time — its names first, then ``StatItems`` for each batch, as
/// WebDAV's `PROPFIND` does. Hidden items and dot-names are included. Where the storage reads
/// items one request each (S3), the items come whole with the names instead
/// (``FolderListing/nodes``), read in the store's own pages.
///
/// Fails with `noSuchFile` when the folder is missing, `notADirectory` when it is a file.
public struct ListFolderEntries: FileOperation {
    public static let name = "entries"
    /// The folder whose entries are read.
    public var path: VirtualPath
    /// Reads the entries of the folder at `path`.
    public init(_ path: VirtualPath) { self.path = path }
    public func run(in context: OperationContext) async throws(CofferError) -> FolderListing {
        try await context.service.entries(inFolder: path)
    }
}

/// What ``ListFolderEntries`` reads of a folder.
public struct FolderListing: Sendable {
    /// Its entries, in the store's order.
    public var entries: [FolderEntry]
    /// Its items, in the same order, where the store gives them as cheaply as their names;
    /// `nil` where they are read a batch at a time with ``StatItems``.
    public var nodes: [FileNode]?

    /// A listing of `entries`, with their `nodes` when read already.
    public init(entries: [FolderEntry], nodes: [FileNode]? = nil) { (self.entries, self.nodes) = (entries, nodes) }
}

/// The items at `paths`, in their order: `nil` for one that is gone or cannot be read. One
/// operation for a batch of ``ListFolderEntries``'s names instead of one ``StatItem`` each.
public struct StatItems: FileOperation {
    public static let name = "stat-items"
    /// The items read.
    public var paths: [VirtualPath]
    /// Reads the items at `paths`.
    public init(_ paths: [VirtualPath]) { self.paths = paths }
    public func run(in context: OperationContext) async throws(CofferError) -> [FileNode?] {
        try await context.service.nodes(at: paths)
    }
}
