public import CofferCore
public import CofferJSONRPC
public import FileService
import Foundation

/// `coffer mcp`: the Model Context Protocol on standard input and output, one JSON-RPC
/// message per line, through the same connection as `coffer rpc` — its own dialect and
/// methods, the service's operations. Only protocol messages go to standard output; what
/// it logs goes to standard error. It ends when standard input closes.
public enum MCPServer {
    public struct Configuration: Sendable {
        /// The host path of the `files:` root: where clients' absolute paths point.
        public var filesRoot: String
        public var language: Language
        public var version: String
        public var serverName = "coffer"
        /// The host folders `import_files` and `export_file` may use from the start; a
        /// client's roots are added while it offers them.
        public var hostAccess = HostAccess.only([])
        public var limits = RPCLimits()
        /// The tools offered, and whether their listings carry output schemas.
        public var tools = ToolChoice.all

        public init(filesRoot: String, language: Language, version: String) {
            self.filesRoot = filesRoot
            self.language = language
            self.version = version
        }
    }

    /// The methods an MCP conversation answers.
    static let methods: RPCMethodRegistry = {
        do {
            return try RPCMethodRegistry([
                Served<MCPInitialize>.self, Served<MCPPing>.self, Served<ServerDiscover>.self, Served<ToolsList>.self,
                Served<ToolsCall>.self, Served<ResourcesList>.self, Served<ResourceTemplatesList>.self,
                Served<ResourcesRead>.self,
            ])
        } catch {
            fatalError("the MCP methods have one name each")
        }
    }()

    /// How every MCP conversation is served, over standard I/O or HTTP alike.
    static func rpcConfiguration(_ configuration: Configuration) -> RPCServer.Configuration {
        var rpc = RPCServer.Configuration(framing: .ndjson, language: configuration.language, version: configuration.version)
        rpc.serverName = configuration.serverName
        rpc.frontEnd = "mcp"
        // Its tools' errors speak of tools, not of `coffer rpc`'s methods and options.
        rpc.hints = .none
        rpc.hostAccess = configuration.hostAccess
        rpc.limits = configuration.limits
        rpc.methods = methods
        rpc.dialect = MCPDialect(paths: PathResolver(filesRoot: configuration.filesRoot), tools: configuration.tools)
        return rpc
    }

    /// Serves one client on standard input and output until its input ends; the exit status.
    public static func serveStandardIO(_ service: FileService, configuration: Configuration) async -> Int32 {
        await RPCServer.serveStandardIO(service, configuration: rpcConfiguration(configuration))
    }
}
