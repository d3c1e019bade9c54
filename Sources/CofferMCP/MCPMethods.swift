import CofferCore
import CofferJSONRPC
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
        var meta = body["_meta"]?.object ?? [:]
        meta["io.modelcontextprotocol/serverInfo"] = ["name": .string(server.name), "version": .string(server.version)]
        self.body["_meta"] = .object(meta)
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

/// One MCP request type: its own params (`_meta` is read beside them), its answer, and
/// whether a client may cache it. ``Served`` makes it an ``RPCMethod`` of the connection,
/// deciding the era — once, for every method — and shaping the result for it.
protocol MCPMethod: Sendable {
    associatedtype Params: Decodable & Sendable = NoParams
    static var name: String { get }
    /// A list or a read that 2026-07-28 lets clients cache (`ttlMs`, `cacheScope`).
    static var cacheable: Bool { get }
    /// The era the answer is in: the request's own, unless the method has one of its own.
    static func era(of meta: RequestMeta?) throws(RPCError) -> Era

    static func answer(_ params: Params, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue]
}

extension MCPMethod {
    static var cacheable: Bool { false }
    static func era(of meta: RequestMeta?) throws(RPCError) -> Era { try Era(meta) }
}

/// An MCP method that can often be answered on the thread that read the request.
protocol ImmediateMCPMethod: MCPMethod {
    static func answerImmediately(_ params: Params, in era: Era, _ context: RequestContext) throws -> [String: JSONValue]?
}

/// An ``MCPMethod`` as the connection runs it.
struct Served<Method: MCPMethod>: RPCMethod {
    struct Params: Decodable, Sendable {
        var meta: RequestMeta?
        var own: Method.Params

        private enum Keys: String, CodingKey { case _meta }

        init(from decoder: any Decoder) throws {
            own = try Method.Params(from: decoder)
            meta = try decoder.container(keyedBy: Keys.self).decodeIfPresent(RequestMeta.self, forKey: ._meta)
        }
    }

    static var name: String { Method.name }

    static func run(_ params: Params, _ context: RequestContext) async throws -> MCPResult {
        let era = try Method.era(of: params.meta)
        return MCPResult(try await Method.answer(params.own, in: era, context), era: era, server: context.server,
                         cacheable: Method.cacheable)
    }
}

extension Served: ImmediateRPCMethod where Method: ImmediateMCPMethod {
    static func runImmediately(_ params: Params, _ context: RequestContext) throws -> MCPResult? {
        let era = try Method.era(of: params.meta)
        return try Method.answerImmediately(params.own, in: era, context).map {
            MCPResult($0, era: era, server: context.server, cacheable: Method.cacheable)
        }
    }
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
    (write_file replaces by default, as the reference server does); a file a replace or a save \
    displaces is kept as a version (list_versions, restore_version), a folder goes to the trash, \
    and a folder is never replaced by a file unless conflict is "replaceFolder". undo_changes \
    reverts what this connection changed.
    """

func capabilities() -> JSONValue {
    ["tools": ["listChanged": false], "resources": ["subscribe": false, "listChanged": false]]
}

// MARK: Methods

/// `initialize` (2025-11-25 and earlier): the revision asked for when Coffer speaks it,
/// else the latest of that era.
struct MCPInitialize: MCPMethod {
    static let name = "initialize"

    struct Params: Decodable, Sendable {
        var protocolVersion: String?
        var capabilities: JSONValue?
    }

    static func era(of meta: RequestMeta?) -> Era { .handshake }

    static func answer(_ params: Params, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] {
        let asked = params.protocolVersion ?? ""
        context.conversation.clientInitialized(capabilities: params.capabilities)
        return [
            "protocolVersion": .string(Revision.handshake.contains(asked) ? asked : Revision.handshake.last!),
            "capabilities": capabilities(),
            "serverInfo": ["name": .string(context.server.name), "title": "Coffer", "version": .string(context.server.version)],
            "instructions": .string(serverInstructions),
            "_meta": ["dev.coffer/maxMessageBytes": .integer(Int64(context.limits.maxMessageBytes)),
                      "dev.coffer/maxInlineBytes": .integer(Int64(context.inlineLimit))],
        ]
    }
}

/// `server/discover` (2026-07-28): every revision Coffer speaks. Answered in the stateless
/// revision whatever the request names: it is how a client finds one.
struct ServerDiscover: MCPMethod {
    static let name = "server/discover"
    static let cacheable = true

    static func era(of meta: RequestMeta?) -> Era { .stateless }

    static func answer(_ params: NoParams, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] {
        ["supportedVersions": JSONValue(Revision.all), "capabilities": capabilities(), "instructions": .string(serverInstructions),
         "_meta": ["dev.coffer/maxMessageBytes": .integer(Int64(context.limits.maxMessageBytes))]]
    }
}

struct MCPPing: MCPMethod {
    static let name = "ping"

    static func answer(_ params: NoParams, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] { [:] }
}

struct ToolsList: MCPMethod {
    static let name = "tools/list"
    static let cacheable = true

    static func answer(_ params: NoParams, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] {
        ["tools": .array(Toolbox.listings(context.conversation.tools))]
    }
}

/// `tools/call`: an unknown tool is a protocol error (`-32602`); anything that goes wrong
/// in a tool, bad arguments included, is a result with `isError` and the user message in
/// the session's language, for the model to read.
struct ToolsCall: ImmediateMCPMethod {
    static let name = "tools/call"

    struct Params: Decodable, Sendable {
        var name: String
        var arguments: JSONValue?
    }

    static func answer(_ params: Params, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] {
        let tool = try self.tool(params, context)
        do throws(CofferError) {
            let arguments = try arguments(params)
            let call = { () async -> Result<ToolOutput, CofferError> in
                do throws(CofferError) {
                    return .success(try await tool.call(arguments, ToolContext(request: context)))
                } catch {
                    return .failure(error)
                }
            }
            // What the call could not do without failing (attributes a copy lost) is told in its text.
            let reported = await context.session.reporting { () async -> Result<ToolOutput, CofferError> in
                guard tool.answersLarge else { return await call() }
                do {
                    return try await context.withLargeAnswer { await call() }
                } catch {
                    return .failure(CofferError(.cancelled))  // only a cancelled wait for a place throws
                }
            }
            var answer = try reported.value.get()
            for warning in reported.warnings { answer.text += "\n" + LocalizedText("Warning: ", "警告：")(context.language) + warning.message(context.language) }
            return answer.result
        } catch {
            // A cancelled call is not answered at all (the dialect drops it).
            if error.kind == .cancelled { throw error }
            return ToolOutput.failure(error, language: context.language)
        }
    }

    /// A tool that can answer at once does (`get_file_info` of a local file): no task, no
    /// thread woken; a failure is left to ``answer(_:in:_:)``, which words it.
    static func answerImmediately(_ params: Params, in era: Era, _ context: RequestContext) throws -> [String: JSONValue]? {
        let tool = try self.tool(params, context)
        guard let arguments = try? arguments(params),
              let output = try? tool.callImmediately(arguments, ToolContext(request: context)) else { return nil }
        return output.result
    }

    private static func tool(_ params: Params, _ context: RequestContext) throws(RPCError) -> any MCPTool.Type {
        guard let tool = Toolbox.named[params.name], context.conversation.tools.offers(params.name) else {
            throw RPCError(code: RPCError.invalidParams, message: "Unknown tool: \(params.name)")
        }
        return tool
    }

    private static func arguments(_ params: Params) throws(CofferError) -> Arguments {
        if params.arguments != nil, params.arguments?.object == nil {
            throw CofferError(.invalidArgument, detail: "“arguments” must be an object")
        }
        return Arguments(params.arguments?.object ?? [:])
    }
}

struct ResourcesList: MCPMethod {
    static let name = "resources/list"
    static let cacheable = true

    /// Files are reached through the template: a listing of them all would be the tree.
    static func answer(_ params: NoParams, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] {
        ["resources": []]
    }
}

struct ResourceTemplatesList: MCPMethod {
    static let name = "resources/templates/list"
    static let cacheable = true

    static func answer(_ params: NoParams, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] {
        let template: JSONValue = [
            "uriTemplate": .string(FileURI.uri(hostPath: context.conversation.paths.filesRoot) + "/{+path}"),
            "name": "files", "title": "Coffer files",
            "description": "A file in Coffer's files: mount, by its path below the allowed directory.",
        ]
        return ["resourceTemplates": [template]]
    }
}

/// `resources/read` of a `file://` URI inside the allowed directory: text in its detected
/// encoding, anything else as base64, up to `maxInlineBytes`.
struct ResourcesRead: MCPMethod {
    static let name = "resources/read"
    static let cacheable = true

    struct Params: Decodable, Sendable { var uri: String }

    static func answer(_ params: Params, in era: Era, _ context: RequestContext) async throws -> [String: JSONValue] {
        // Not found: -32002 until 2025-11-25, -32602 since.
        func notFound(_ why: String) -> RPCError {
            RPCError(code: era == .stateless ? RPCError.invalidParams : -32002, message: "Resource not found: \(why)",
                     data: ["uri": params.uri])
        }
        guard let hostPath = FileURI.hostPath(params.uri) else { throw notFound("only file:// URIs are served") }
        do throws(CofferError) {
            // Links followed inside the root, as the tools follow them.
            let path = try await context.perform(FollowLinks(try context.conversation.paths.resolve(hostPath).path))
            return ["contents": [try await contents(of: path, uri: params.uri, context)]]
        } catch where error.kind == .noSuchFile || error.kind == .outsideSandbox || error.kind == .invalidName {
            throw notFound(error.userMessage(in: context.language).text)
        } catch {
            throw RPCError(code: RPCError.internalError, message: error.userMessage(in: context.language).text,
                           data: ["uri": params.uri, "kind": error.kind.identifier])
        }
    }

    private static func contents(of path: VirtualPath, uri: String, _ context: RequestContext) async throws(CofferError) -> JSONValue {
        let limit = context.inlineLimit
        let node = try await context.perform(StatItem(path))
        guard node.kind == .file, node.special == nil else { throw CofferError(.isADirectory, path: path) }
        guard node.size <= Int64(limit) else { throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes") }
        var content: [String: JSONValue] = ["uri": .string(uri), "mimeType": .string(context.service.registry.mimeType(of: node.typeIdentifier))]
        if case .text(let text)? = try? await context.perform(ReadRange(path, length: limit, as: .text)) {
            content["text"] = .string(text.text)
        } else if case .bytes(let bytes) = try await context.perform(ReadRange(path, length: limit, as: .bytes)) {
            content["blob"] = .string(Data(bytes.bytes).base64EncodedString())
        }
        return .object(content)
    }
}
