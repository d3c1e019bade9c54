public import CofferCore

/// Reads a file through without keeping it, with progress: what makes a remote file local
/// (an S3 mount keeps its contents in `Library/Caches/Remote`, so later reads need no
/// network), as the Files app downloads an iCloud placeholder before it is opened.
/// On a local mount it only reads the file.
///
/// Fails with `noSuchFile` when nothing is at the path, `isADirectory` for a folder, and
/// `cancelled` when its task is cancelled (between pieces).
public struct FetchItem: FileOperation {
    public static let name = "fetch"

    /// The file read through.
    public var path: VirtualPath

    /// Reads the file at `path` through.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.withProgress { (progress) throws(CofferError) -> FileNode in
            try await context.service.fetch(path, progress: progress)
        }
    }
}
