public import CofferCore

/// Total size and counts below a path (hidden items included; links not followed).
public struct MeasureDiskUsage: FileOperation {
    public static let name = "diskUsage"

    public var path: VirtualPath

    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> DiskUsage { try await context.service.diskUsage(path) }
}
