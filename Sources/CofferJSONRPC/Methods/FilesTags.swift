import CofferCore
import FileService

/// `files/tags/set`: adds and removes tags (`user.xdg.tags`) of items, each with its outcome.
struct FilesTagsSet: RPCMethod {
    static let name = "files/tags/set"
    struct Params: Decodable, Sendable {
        var paths: [PathParam]
        var add: [String]?
        var remove: [String]?
    }
    struct Item: Encodable, Sendable {
        var path: String
        var tags: [String]?
        var error: ItemFailure?
    }
    struct Result: Encodable, Sendable { var results: [Item] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        guard !(params.add ?? []).isEmpty || !(params.remove ?? []).isEmpty else {
            throw RPCError.invalidParams("give param “add” or param “remove” (or both)")
        }
        let paths = try params.paths.map { (path) throws(CofferError) in try path.resolved() }
        let outcomes = try await context.perform(TagItems(paths, adding: params.add ?? [], removing: params.remove ?? []))
        return Result(results: outcomes.map { path, outcome in
            switch outcome {
            case .success(let tags): Item(path: path.description, tags: tags)
            case .failure(let error): Item(path: path.description, error: ItemFailure(error, context))
            }
        })
    }
}

/// `files/tags/get`: the tags of one item.
struct FilesTagsGet: RPCMethod {
    static let name = "files/tags/get"
    struct Params: Decodable, Sendable { var path: PathParam }
    struct Result: Encodable, Sendable { var tags: [String] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        Result(tags: try await context.perform(ReadTags(try params.path.resolved())))
    }
}

/// `files/tags/list`: every tag in use below a folder (`files:/`), most used first.
struct FilesTagsList: RPCMethod {
    static let name = "files/tags/list"
    struct Params: Decodable, Sendable { var path: PathParam? }
    struct Tag: Encodable, Sendable { var tag: String; var count: Int }
    struct Result: Encodable, Sendable { var tags: [Tag] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let folder = try params.path?.resolved() ?? .root()
        return Result(tags: try await context.perform(CountTags(below: folder)).map { Tag(tag: $0.tag, count: $0.count) })
    }
}
