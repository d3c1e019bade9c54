import CofferCore
import FileService

/// `files/watch`: reports changes below a folder (or to a file) as `files/didChange`
/// notifications carrying the returned `watchId`, until `files/unwatch` or the end of the
/// session.
struct FilesWatch: RPCMethod {
    static let name = "files/watch"

    struct Params: Decodable, Sendable { var path: PathParam }
    struct Result: Encodable, Sendable { var watchId: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let path = try params.path.resolved()
        let id = try await context.watches.add { id in
            try await context.service.watch(path) { changes in context.watches.notify(id, changes) }
        }
        return Result(watchId: id)
    }
}

/// `files/unwatch`: stops a watch; no notification for it follows the answer.
struct FilesUnwatch: RPCMethod {
    static let name = "files/unwatch"

    struct Params: Decodable, Sendable { var watchId: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NullResult {
        guard context.watches.remove(params.watchId) else {
            throw RPCError.invalidParams("param “watchId”: no watch “\(params.watchId)”")
        }
        return NullResult()
    }
}
