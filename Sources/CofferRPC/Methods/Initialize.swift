import CofferCore
import FileService

/// `initialize`: the server's name, version, mounts, limits and host access. The server
/// reads `locale` itself when the request arrives (the session's language).
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
        struct ServerInfo: Encodable, Sendable { var name: String; var version: String }
        struct MountInfo: Encodable, Sendable { var name: String; var writable: Bool; var description: String }
        struct Limits: Encodable, Sendable { var maxMessageBytes: Int; var maxInlineBytes: Int; var maxChunkBytes: Int }
        var serverInfo: ServerInfo
        var protocolVersion: Int
        var mounts: [MountInfo]
        var limits: Limits
        var hostAccess: [String]
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let mounts = context.service.mounts.filter(\.isVisible).map { mount in
            Result.MountInfo(name: mount.name, writable: mount.isWritable,
                             description: mount.description?(context.language) ?? mount.name)
        }
        return Result(serverInfo: .init(name: context.session.name, version: context.session.version), protocolVersion: 1,
                      mounts: mounts,
                      limits: .init(maxMessageBytes: context.limits.maxMessageBytes,
                                    maxInlineBytes: context.limits.maxInlineBytes,
                                    maxChunkBytes: context.limits.maxChunkBytes),
                      hostAccess: context.allowedHostFolders)
    }
}
