public import CofferCore

/// Total size and counts below a path (hidden items included; links not followed).
///
/// A folder below that cannot be read is left out and named in ``DiskUsage/unreadable``;
/// the path itself missing fails with `noSuchFile`.
public struct MeasureDiskUsage: FileOperation {
    public static let name = "diskUsage"

    /// The file or folder measured.
    public var path: VirtualPath

    /// Measures what is at `path`.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> DiskUsage { try await context.service.diskUsage(path) }
}
