import CofferCore
import CofferRPC
import FileService
import Foundation

/// The protocol revisions Coffer speaks: the handshake era (`initialize` first) and the
/// stateless one (every request says its revision in `_meta`).
enum Revision {
    static let handshake = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    static let stateless = ["2026-07-28"]
    static let all = handshake + stateless
    static let unsupportedVersion = -32022
}

/// What a request's `_meta` says about the client.
struct RequestMeta: Decodable, Sendable {
    var protocolVersion: String?

    enum CodingKeys: String, CodingKey {
        case protocolVersion = "io.modelcontextprotocol/protocolVersion"
    }
}

/// The era one request is answered in: decided by the request alone, never by what came
/// before on the connection.
enum Era: Sendable {
    case handshake
    case stateless

    /// A request without a revision in `_meta` is of the handshake era.
    /// - Throws: `-32022` naming the supported revisions for a revision Coffer does not speak.
    init(_ meta: RequestMeta?) throws(RPCError) {
        guard let version = meta?.protocolVersion else { self = .handshake; return }
        if Revision.stateless.contains(version) { self = .stateless; return }
        if Revision.handshake.contains(version) { self = .handshake; return }
        throw RPCError(code: Revision.unsupportedVersion, message: "Unsupported protocol version: \(version)",
                       data: ["supported": Revision.all, "requested": version])
    }
}

/// A result as the era wants it: in the stateless era with `resultType`, the server's info
/// in `_meta`, and for the lists and reads a client may cache, `ttlMs` and `cacheScope`
/// (sent only there: clients of the handshake era have refused results with fields of a
/// later revision).
struct MCPResult: Encodable, Sendable {
    var body: [String: JSONValue]

    init(_ body: [String: JSONValue], era: Era, server: ServerInfo, cacheable: Bool = false) {
        self.body = body
        guard era == .stateless else { return }
        self.body["resultType"] = "complete"
        self.body["_meta"] = ["io.modelcontextprotocol/serverInfo": ["name": .string(server.name), "version": .string(server.version)]]
        if cacheable {
            // Coffer's tools and templates do not change while it runs; files do, so reads
            // are not to be cached.
            self.body["ttlMs"] = .integer(self.body["contents"] == nil ? 3_600_000 : 0)
            self.body["cacheScope"] = "private"
        }
    }

    func encode(to encoder: any Encoder) throws { try JSONValue.object(body).encode(to: encoder) }
}

extension MCPResult: JSONWritable {
    func writeJSON(into bytes: inout [UInt8]) { JSONValue.object(body).writeJSON(into: &bytes) }
}

/// What every request's params may carry.
struct MetaOnly: Decodable, Sendable {
    var _meta: RequestMeta?
}

extension RequestContext {
    /// The conversation's MCP state: the dialect made it.
    var conversation: MCPConversation { lifecycle as! MCPConversation }
}

/// What the server tells a model about itself.
let serverInstructions = """
    Files live in Coffer's sandbox. Paths are absolute paths inside the allowed directory \
    (list_allowed_directories), or Coffer's virtual paths such as files:/notes/a.md and trash:. \
    Deleting is soft: trash_file moves items to the trash, restore_file brings them back. \
    Moves, copies and writes never replace an existing item unless conflict is "replace" \
    (write_file replaces by default, as the reference server does).
    """

func capabilities() -> JSONValue {
    ["tools": ["listChanged": false], "resources": ["subscribe": false, "listChanged": false]]
}

// MARK: Methods

/// `initialize` (2025-11-25 and earlier): the revision asked for when Coffer speaks it,
/// else the latest of that era.
struct MCPInitialize: RPCMethod {
    static let name = "initialize"

    struct Params: Decodable, Sendable {
        var protocolVersion: String?
        var capabilities: JSONValue?
        var clientInfo: JSONValue?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> MCPResult {
        let asked = params.protocolVersion ?? ""
        let version = Revision.handshake.contains(asked) ? asked : Revision.handshake.last!
        context.conversation.clientInitialized(capabilities: params.capabilities)
        return MCPResult([
            "protocolVersion": .string(version),
            "capabilities": capabilities(),
            "serverInfo": ["name": .string(context.server.name), "title": "Coffer", "version": .string(context.server.version)],
            "instructions": .string(serverInstructions),
            "_meta": ["dev.coffer/maxMessageBytes": .integer(Int64(context.limits.maxMessageBytes)),
                      "dev.coffer/maxInlineBytes": .integer(Int64(context.limits.maxInlineBytes))],
        ], era: .handshake, server: context.server)
    }
}

/// `server/discover` (2026-07-28): every revision Coffer speaks, in either era.
struct ServerDiscover: RPCMethod {
    static let name = "server/discover"

    static func run(_ params: MetaOnly, _ context: RequestContext) async throws -> MCPResult {
        // A discover is answered whatever revision it names: it is how a client finds one.
        let era = (try? Era(params._meta)) ?? .stateless
        var result = MCPResult([
            "supportedVersions": JSONValue(Revision.all),
            "capabilities": capabilities(),
            "instructions": .string(serverInstructions),
        ], era: .stateless, server: context.server, cacheable: true)
        if era == .handshake { result.body["resultType"] = "complete" }
        result.body["_meta"] = [
            "io.modelcontextprotocol/serverInfo": ["name": .string(context.server.name), "version": .string(context.server.version)],
            "dev.coffer/maxMessageBytes": .integer(Int64(context.limits.maxMessageBytes)),
        ]
        return result
    }
}

struct MCPPing: RPCMethod {
    static let name = "ping"

    static func run(_ params: MetaOnly, _ context: RequestContext) async throws -> MCPResult {
        MCPResult([:], era: try Era(params._meta), server: context.server)
    }
}

struct ToolsList: RPCMethod {
    static let name = "tools/list"

    static func run(_ params: MetaOnly, _ context: RequestContext) async throws -> MCPResult {
        MCPResult(["tools": .array(Toolbox.all.map { $0.listing })], era: try Era(params._meta), server: context.server,
                  cacheable: true)
    }
}

/// `tools/call`: an unknown tool is a protocol error (`-32602`); anything that goes wrong
/// in a tool, bad arguments included, is a result with `isError` and the user message in
/// the session's language, for the model to read.
struct ToolsCall: RPCMethod {
    static let name = "tools/call"

    struct Params: Decodable, Sendable {
        var name: String
        var arguments: JSONValue?
        var _meta: RequestMeta?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> MCPResult {
        let (era, tool) = try prepare(params)
        do throws(CofferError) {
            let output = try await tool.call(try arguments(params), ToolContext(request: context))
            return MCPResult(output.result, era: era, server: context.server)
        } catch {
            // A cancelled call is not answered at all (the dialect drops it).
            if error.kind == .cancelled { throw error }
            return MCPResult(ToolOutput.failure(error, language: context.language), era: era, server: context.server)
        }
    }

    private static func prepare(_ params: Params) throws(RPCError) -> (Era, any MCPTool.Type) {
        let era = try Era(params._meta)
        guard let tool = Toolbox.named[params.name] else {
            throw RPCError(code: RPCError.invalidParams, message: "Unknown tool: \(params.name)")
        }
        return (era, tool)
    }

    private static func arguments(_ params: Params) throws(CofferError) -> Arguments {
        if params.arguments != nil, params.arguments?.object == nil {
            throw CofferError(.invalidArgument, detail: "“arguments” must be an object")
        }
        return Arguments(params.arguments?.object ?? [:])
    }
}

extension ToolsCall: ImmediateRPCMethod {
    /// A tool that can answer at once does (`get_file_info` of a local file): no task, no
    /// thread woken; a failure is left to ``run(_:_:)``, which words it.
    static func runImmediately(_ params: Params, _ context: RequestContext) throws -> MCPResult? {
        let (era, tool) = try prepare(params)
        guard let arguments = try? arguments(params),
              let output = try? tool.callImmediately(arguments, ToolContext(request: context)) else { return nil }
        return MCPResult(output.result, era: era, server: context.server)
    }
}

struct ResourcesList: RPCMethod {
    static let name = "resources/list"

    static func run(_ params: MetaOnly, _ context: RequestContext) async throws -> MCPResult {
        // Files are reached through the template: a listing of them all would be the tree.
        MCPResult(["resources": []], era: try Era(params._meta), server: context.server, cacheable: true)
    }
}

struct ResourceTemplatesList: RPCMethod {
    static let name = "resources/templates/list"

    static func run(_ params: MetaOnly, _ context: RequestContext) async throws -> MCPResult {
        let root = context.conversation.paths.filesRoot
        let template: JSONValue = [
            "uriTemplate": .string(FileURI.uri(hostPath: root) + "/{+path}"),
            "name": "files",
            "title": "Coffer files",
            "description": "A file in Coffer's files: mount, by its path below the allowed directory.",
        ]
        return MCPResult(["resourceTemplates": [template]], era: try Era(params._meta), server: context.server,
                         cacheable: true)
    }
}

/// `resources/read` of a `file://` URI inside the allowed directory: text in its detected
/// encoding, anything else as base64, up to `maxInlineBytes`.
struct ResourcesRead: RPCMethod {
    static let name = "resources/read"

    struct Params: Decodable, Sendable {
        var uri: String
        var _meta: RequestMeta?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> MCPResult {
        let era = try Era(params._meta)
        // Not found: -32002 until 2025-11-25, -32602 since.
        let notFound = era == .stateless ? RPCError.invalidParams : -32002
        guard let hostPath = FileURI.hostPath(params.uri) else {
            throw RPCError(code: notFound, message: "Resource not found: only file:// URIs are served", data: ["uri": params.uri])
        }
        let path: VirtualPath
        do {
            path = try context.conversation.paths.resolve(hostPath).path
        } catch {
            throw RPCError(code: notFound, message: "Resource not found: \(error.userMessage(in: context.language).text)",
                           data: ["uri": params.uri])
        }
        do {
            let limit = context.limits.maxInlineBytes
            let node = try await context.perform(StatItem(path))
            guard node.kind == .file, node.special == nil else { throw CofferError(.isADirectory, path: path) }
            guard node.size <= Int64(limit) else { throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes") }
            let mime = MediaTypes.mimeType(of: node, registry: context.service.registry)
            var content: [String: JSONValue] = ["uri": .string(params.uri), "mimeType": .string(mime)]
            if case .text(let text) = try? await context.perform(ReadRange(path, length: limit, as: .text)) {
                content["text"] = .string(text.text)
            } else {
                guard case .bytes(let bytes) = try await context.perform(ReadRange(path, length: limit, as: .bytes)) else {
                    throw CofferError(.unsupported, path: path)
                }
                content["blob"] = .string(Data(bytes.bytes).base64EncodedString())
            }
            return MCPResult(["contents": [.object(content)]], era: era, server: context.server, cacheable: true)
        } catch let error as CofferError where error.kind == .noSuchFile {
            throw RPCError(code: notFound, message: "Resource not found: \(error.userMessage(in: context.language).text)",
                           data: ["uri": params.uri])
        } catch let error as CofferError {
            throw RPCError(code: RPCError.internalError, message: error.userMessage(in: context.language).text,
                           data: ["uri": params.uri, "kind": error.kind.identifier])
        }
    }
}
