@_spi(Engine) public import CofferCore

/// Where a path leads once the symbolic links along it are followed, inside its mount: for a
/// front end that must act as a program that follows links does (MCP's tools, as the
/// reference filesystem server). A mount without links answers the path as it is.
/// - Throws: `outsideSandbox` naming the path asked about — never where a link points — when
///   a link leads out of the mount.
public struct FollowLinks: FileOperation {
    public static let name = "followLinks"

    /// The path whose links are followed.
    public var path: VirtualPath

    /// Follows the links along `path`.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> VirtualPath {
        guard let backend = try context.service.mount(for: path).backend as? any LinkResolvingBackend else { return path }
        return try await backend.resolvingLinks(path)
    }
}
