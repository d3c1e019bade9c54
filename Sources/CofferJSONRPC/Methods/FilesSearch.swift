import CofferCore
import FileService

/// `files/search`: names containing `query`, in walk order, up to `limit` (the front end's
/// `searchLimit`: 100 for `coffer rpc`).
struct FilesSearch: RPCMethod {
    static let name = "files/search"
    /// The most matches one request may ask for.
    static let maxLimit = 10_000

    struct Params: Decodable, Sendable {
        var query: String
        var path: PathParam?
        var types: [String]?
        var limit: Int?
    }

    struct Result: Encodable, Sendable {
        var matches: [NodeResult]
        /// More matches exist than were returned.
        var truncated: Bool
        /// `index` or `walk`: which engine answered.
        var engine: String
        /// Folders the walk could not read (the index never reports any).
        var unreadable: [String]
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let limit = params.limit ?? context.session.defaults.searchLimit ?? maxLimit
        guard (0...maxLimit).contains(limit) else {
            throw RPCError.invalidParams("param “limit” must be between 0 and \(maxLimit)")
        }
        let query = SearchQuery(pattern: try NamePattern(params.query), scope: try params.path?.resolved() ?? .root(),
                                types: params.types ?? [], limit: limit)
        let results = try await context.perform(SearchItems(query))
        var result = Result(matches: [], truncated: false, engine: results.engine.rawValue, unreadable: [])
        for try await event in results.events {
            switch event {
            case .matches(let nodes): result.matches += nodes.map(NodeResult.init)
            case .paths: break  // asked for nodes
            case .unreadable(let path, _): result.unreadable.append(path.description)
            case .truncated: result.truncated = true
            }
        }
        return result
    }
}

extension FilesSearch.Result: JSONWritable {
    func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(into: bytes)
        object.string("engine", engine)
        object.nodes("matches", matches)
        object.bool("truncated", truncated)
        object.strings("unreadable", unreadable)
        bytes = object.finish()
    }
}
