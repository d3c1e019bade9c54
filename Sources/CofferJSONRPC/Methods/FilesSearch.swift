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
        /// Tags a match must all carry.
        var tags: [String]?
        /// Changed since / before a time: `7d`, `12h`, `2026-11-01`, an ISO 8601 time.
        var newer: String?
        var older: String?
        /// Files of at least / under a size: bytes, or `10K`, `5M`, `1G`.
        var larger: SizeParam?
        var smaller: SizeParam?
        /// `name`, `modified` or `size` instead of the walk order; `descending` as `files/list`.
        var sort: Sort?
        var descending: Bool?
        enum Sort: String, Sendable, WordChoice { case name, modified, size }
    }

    /// A size: a number of bytes, or a string with a unit (`"10M"`).
    struct SizeParam: Decodable, Sendable {
        var text: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bytes = try? container.decode(Int64.self) { text = String(bytes) } else { text = try container.decode(String.self) }
        }
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
        var query = SearchQuery(pattern: try NamePattern(params.query), scope: try params.path?.resolved() ?? .root(),
                                types: params.types ?? [], limit: limit)
        query.filters = try SearchFilters(newer: params.newer, older: params.older, larger: params.larger?.text,
                                          smaller: params.smaller?.text, tags: params.tags ?? [])
        if let sort = params.sort {
            let field: SortOrder.Field = switch sort {
            case .name: .name
            case .modified: .modificationDate
            case .size: .size
            }
            query.order = SortOrder(field, ascending: params.descending.map { !$0 })
        }
        let results = try await context.perform(SearchItems(query))
        var result = Result(matches: [], truncated: false, engine: results.engine.rawValue, unreadable: [])
        for try await event in results.events {
            switch event {
            case .matches(let nodes): result.matches += nodes.map { NodeResult($0, in: context) }
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
