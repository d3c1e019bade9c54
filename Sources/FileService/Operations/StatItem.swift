public import CofferCore

/// The item at a path: its kind, size, dates, type and version.
///
/// Fails with `noSuchFile` when nothing is there, and `unknownMount` for a mount the
/// service does not have. Where the mount's storage answers at once, a front end may have
/// it without waiting (``Session/performImmediately(_:)``).
public struct StatItem: FileOperation {
    public static let name = "stat"

    /// The item read.
    public var path: VirtualPath

    /// Reads the item at `path`.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode { try await context.service.stat(path) }
}

extension StatItem: ImmediateOperation {
    public func runImmediately(in service: FileService) throws(CofferError) -> FileNode? {
        try service.statImmediately(path)
    }
}
