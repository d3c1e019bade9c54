import CofferCore
import FileService

/// `files/list`: one page of a folder, folders first, in natural order.
struct FilesList: RPCMethod {
    static let name = "files/list"

    struct Params: Decodable, Sendable {
        enum Sort: String, Sendable, WordChoice { case name, modified, size, kind }
        var path: PathParam
        var hidden: Bool?
        var sort: Sort?
        var descending: Bool?
        var offset: Int?
        var limit: Int?
    }

    struct Result: Encodable, Sendable {
        var entries: [NodeResult]
        var total: Int
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        guard (params.offset ?? 0) >= 0, (params.limit ?? 0) >= 0 else {
            throw RPCError.invalidParams("param “offset” and “limit” must not be negative")
        }
        var options = ListOptions()
        options.includeHidden = params.hidden ?? false
        options.offset = params.offset ?? 0
        options.limit = params.limit ?? context.session.defaults.listPageSize
        let field: SortOrder.Field = switch params.sort ?? .name {
        case .name: .name
        case .modified: .modificationDate
        case .size: .size
        case .kind: .kind
        }
        options.order = SortOrder(field, ascending: params.descending.map { !$0 })
        let page = try await context.perform(ListFolder(try params.path.resolved(), options: options))
        return Result(entries: page.items.map { NodeResult($0, in: context) }, total: page.total)
    }
}

extension FilesList.Result: JSONWritable {
    func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(into: bytes)
        object.nodes("entries", entries)
        object.integer("total", total)
        bytes = object.finish()
    }
}
