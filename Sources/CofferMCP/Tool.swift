import CofferCore
import CofferJSONRPC
import FileService
import Foundation

/// One MCP tool's behaviour: turn arguments into operations of the session and shape the
/// answer. Like an RPC method, it holds no file logic of its own. What it tells the model —
/// its title, description, schemas and annotations — is data, in `tools.json`
/// (``ToolCatalog``), under the same name.
protocol MCPTool: Sendable {
    static var name: String { get }
    /// Whether its answer can be large (a file's content): such calls take one of the
    /// connection's few places for large answers (``RequestContext/withLargeAnswer(_:)``).
    static var answersLarge: Bool { get }

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput

    /// The answer at once, on the thread that read the request, when the storage can give it
    /// without waiting (``ImmediateOperation``); `nil` to run ``call(_:_:)`` as a task. Only
    /// for reads of metadata: the connection reads nothing else meanwhile.
    static func callImmediately(_ arguments: Arguments, _ context: ToolContext) throws(CofferError) -> ToolOutput?
}

extension MCPTool {
    static var answersLarge: Bool { false }

    static func callImmediately(_ arguments: Arguments, _ context: ToolContext) throws(CofferError) -> ToolOutput? { nil }
}

/// A tool's arguments, read with errors that name the argument.
struct Arguments: Sendable {
    let values: [String: JSONValue]

    init(_ values: [String: JSONValue]) { self.values = values }

    private func bad(_ name: String, _ expected: String) -> CofferError {
        CofferError(.invalidArgument, detail: "“\(name)” must be \(expected)")
    }

    /// A present, non-null value.
    private func value(_ name: String) -> JSONValue? {
        guard let value = values[name], value != .null else { return nil }
        return value
    }

    func string(_ name: String) throws(CofferError) -> String {
        guard let value = value(name) else { throw CofferError(.invalidArgument, detail: "“\(name)” is missing") }
        guard let text = value.string else { throw bad(name, "a string") }
        return text
    }

    func optionalString(_ name: String) throws(CofferError) -> String? {
        guard let value = value(name) else { return nil }
        guard let text = value.string else { throw bad(name, "a string") }
        return text
    }

    func optionalInteger(_ name: String, minimum: Int64 = 0) throws(CofferError) -> Int64? {
        guard let value = value(name) else { return nil }
        guard let number = value.integer, number >= minimum else { throw bad(name, "an integer of at least \(minimum)") }
        return number
    }

    func bool(_ name: String, default fallback: Bool = false) throws(CofferError) -> Bool {
        guard let value = value(name) else { return fallback }
        guard let flag = value.bool else { throw bad(name, "true or false") }
        return flag
    }

    func strings(_ name: String) throws(CofferError) -> [String] {
        guard let value = value(name) else { throw CofferError(.invalidArgument, detail: "“\(name)” is missing") }
        guard let items = value.array, case let texts = items.compactMap(\.string), texts.count == items.count else {
            throw bad(name, "an array of strings")
        }
        return texts
    }

    func optionalStrings(_ name: String) throws(CofferError) -> [String] {
        values[name] == nil || values[name] == .null ? [] : try strings(name)
    }

    func array(_ name: String) throws(CofferError) -> [JSONValue] {
        guard let value = value(name) else { throw CofferError(.invalidArgument, detail: "“\(name)” is missing") }
        guard let items = value.array else { throw bad(name, "an array") }
        return items
    }

    /// `conflict`: fail, keepBoth, replace or, where a folder may be replaced, replaceFolder;
    /// `nil` when the call names none (then MCP's row of ``FrontEndDefaults`` decides).
    func conflict(replacingFolders: Bool = true) throws(CofferError) -> ConflictPolicy? {
        guard let text = try optionalString("conflict") else { return nil }
        guard let policy = ConflictPolicy(rawValue: text), replacingFolders || policy != .replaceFolder else {
            throw bad("conflict", replacingFolders ? "fail, keepBoth, replace or replaceFolder" : "fail, keepBoth or replace")
        }
        return policy
    }

    /// One of `choices`.
    func choice(_ name: String, _ choices: [String], default fallback: String) throws(CofferError) -> String {
        guard let text = try optionalString(name) else { return fallback }
        guard choices.contains(text) else { throw bad(name, choices.joined(separator: " or ")) }
        return text
    }
}

/// What a tool may use while it runs.
struct ToolContext: Sendable {
    let request: RequestContext

    var session: Session { request.session }
    var service: FileService { request.service }
    var language: Language { request.language }
    var limits: RPCLimits { request.limits }
    var inlineLimit: Int { request.inlineLimit }
    var paths: PathResolver { request.conversation.paths }

    /// The path argument `name`, resolved, with its links followed (``resolve(_:)``).
    func path(_ arguments: Arguments, _ name: String) async throws(CofferError) -> (path: VirtualPath, style: PathResolver.Style) {
        try await resolve(try arguments.string(name))
    }

    /// A path a client sent, made a Coffer path, and followed through the links along it as the
    /// reference server follows them (`realpath`): a link inside the root that stays inside
    /// leads to its target; one that leads out is refused, naming only the path sent.
    func resolve(_ text: String) async throws(CofferError) -> (path: VirtualPath, style: PathResolver.Style) {
        let (path, style) = try paths.resolve(text)
        return (try await request.perform(FollowLinks(path)), style)
    }

    /// The same, but for the last component, which is taken as it is: a link named by the
    /// path is the item meant (`trash_file` of a link trashes the link, not what it points to).
    func resolveParent(_ text: String) async throws(CofferError) -> (path: VirtualPath, style: PathResolver.Style) {
        let (path, style) = try paths.resolve(text)
        guard let parent = path.parent else { return (path, style) }
        return (try await request.perform(FollowLinks(parent)).appending(trustedName: path.name), style)
    }

    func perform<Operation: FileOperation>(
        _ operation: @autoclosure () throws(CofferError) -> Operation
    ) async throws(CofferError) -> Operation.Output {
        try await request.perform(try operation())
    }
}

/// What a tool answers: text for the model (the content block), and the same as
/// `structuredContent`, whose `content` is that text.
struct ToolOutput: Sendable {
    var text: String
    var fields: [String: JSONValue] = [:]
    /// Blocks after the text (images, audio, embedded resources).
    var blocks: [JSONValue] = []
    /// Blocks instead of the text block (`read_media_file` answers with the media alone).
    var replacesText = false

    var result: [String: JSONValue] {
        var structured = fields
        structured["content"] = .string(text)
        let textBlock: JSONValue = ["type": "text", "text": .string(text)]
        return ["content": .array(replacesText ? blocks : [textBlock] + blocks), "structuredContent": .object(structured),
                "isError": false]
    }

    /// A failure, as a result the model reads: the user message and its hint.
    static func failure(_ error: CofferError, language: Language) -> [String: JSONValue] {
        let message = error.userMessage(in: language)
        let text = message.hint.isEmpty ? message.text : message.text + " " + message.hint
        return ["content": [["type": "text", "text": .string(text)]], "isError": true]
    }
}

