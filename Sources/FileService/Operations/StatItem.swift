public import CofferCore

/// The item at a path.
public struct StatItem: FileOperation {
    public static let name = "stat"

    public var path: VirtualPath

    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode { try await context.service.stat(path) }
}

extension StatItem: ImmediateOperation {
    public func runImmediately(in service: FileService) throws(CofferError) -> FileNode? {
        try service.statImmediately(path)
    }
}
