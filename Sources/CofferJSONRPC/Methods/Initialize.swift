import CofferCore
import FileService

/// `initialize`: the server's name, version, mounts, limits, host access and methods. The
/// server reads `locale` itself when the request arrives (the session's language).
struct Initialize: RPCMethod {
    static let name = "initialize"

    struct Params: Decodable, Sendable {
        struct ClientInfo: Decodable, Sendable { var name: String?; var version: String? }
        struct Capabilities: Decodable, Sendable { var progress: Bool?; var watch: Bool? }
        var clientInfo: ClientInfo?
        var locale: String?
        var capabilities: Capabilities?
    }

    struct Result: Encodable, Sendable {
        struct MountInfo: Encodable, Sendable { var name: String; var writable: Bool; var description: String }
        struct Limits: Encodable, Sendable {
            var maxMessageBytes: Int
            var maxInlineBytes: Int
            var maxChunkBytes: Int
            var maxRequestsInFlight: Int
            var maxQueuedRequests: Int
        }
        var serverInfo: ServerInfo
        var protocolVersion: Int
        var mounts: [MountInfo]
        var limits: Limits
        var hostAccess: [String]
        /// Every method the server answers, an application's own included.
        var methods: [String]
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let mounts = context.service.mounts.filter(\.isVisible).map { mount in
            Result.MountInfo(name: mount.name, writable: mount.isWritable,
                             description: mount.description?(context.language) ?? mount.name)
        }
        let limits = context.limits
        return Result(serverInfo: context.server, protocolVersion: 1, mounts: mounts,
                      limits: .init(maxMessageBytes: limits.maxMessageBytes, maxInlineBytes: limits.maxInlineBytes,
                                    maxChunkBytes: limits.maxChunkBytes, maxRequestsInFlight: limits.maxRequestsInFlight,
                                    maxQueuedRequests: limits.maxQueuedRequests),
                      hostAccess: context.session.allowedHostFolders ?? [], methods: context.methods.names)
    }
}
