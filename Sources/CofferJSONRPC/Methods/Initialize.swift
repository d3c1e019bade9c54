import CofferDesktop
import CofferCore
import FileService

/// `initialize`: the server's name, version, mounts, limits, what a request that leaves a
/// choice out gets (the front end's row of ``FrontEndDefaults``), host access and methods.
/// The server reads `locale` itself when the request arrives (the session's language). A
/// client that answers `conflict/ask` (`capabilities.conflictQuestions`) is asked where its
/// row says "ask"; one that does not gets `fileExists` there, as a script does at the REPL.
struct Initialize: RPCMethod {
    static let name = "initialize"

    struct Params: Decodable, Sendable {
        struct ClientInfo: Decodable, Sendable { var name: String?; var version: String? }
        struct Capabilities: Decodable, Sendable { var progress: Bool?; var watch: Bool?; var conflictQuestions: Bool? }
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
            var maxPendingBytes: Int
            var maxLargeAnswersInFlight: Int
        }
        /// What a request that leaves a choice out gets.
        struct Defaults: Encodable, Sendable {
            /// By operation (audit name): `ask`, `fail`, `keepBoth`, `replace`, `replaceFolder`;
            /// an operation not named keeps its own (RPC.md).
            var conflicts: [String: String]
            var listPageSize: Int?
            var searchLimit: Int?
        }
        var serverInfo: ServerInfo
        var protocolVersion: Int
        var mounts: [MountInfo]
        var limits: Limits
        var defaults: Defaults
        var hostAccess: [String]
        /// Every method the server answers, an application's own included.
        var methods: [String]
        /// Whether the server runs in a graphical session (`DISPLAY` or `WAYLAND_DISPLAY`), so that
        /// `files/openWith` opens an application on the screen in front of the user.
        var desktop: Bool
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let session = context.session
        if params.capabilities?.conflictQuestions == true, let questions = context.lifecycle.questions {
            session.conflictQuestion = questions.conflictQuestion(language: { [session] in session.language })
            session.changedFileQuestion = questions.changedFileQuestion(language: { [session] in session.language })
        }
        let mounts = context.service.mounts.filter(\.isVisible).map { mount in
            Result.MountInfo(name: mount.name, writable: mount.isWritable,
                             description: mount.description?(context.language) ?? mount.name)
        }
        let limits = context.limits
        let defaults = session.defaults
        let conflicts = defaults.conflicts.mapValues(\.name)
        return Result(serverInfo: context.server, protocolVersion: 1, mounts: mounts,
                      limits: .init(maxMessageBytes: limits.maxMessageBytes, maxInlineBytes: context.inlineLimit,
                                    maxChunkBytes: limits.maxChunkBytes, maxRequestsInFlight: limits.maxRequestsInFlight,
                                    maxQueuedRequests: limits.maxQueuedRequests, maxPendingBytes: limits.maxPendingBytes,
                                    maxLargeAnswersInFlight: limits.maxLargeAnswersInFlight),
                      defaults: .init(conflicts: conflicts, listPageSize: defaults.listPageSize,
                                      searchLimit: defaults.searchLimit),
                      hostAccess: context.session.allowedHostFolders ?? [], methods: context.methods.names,
                      desktop: DesktopApplications.hasGraphicalSession())
    }
}
