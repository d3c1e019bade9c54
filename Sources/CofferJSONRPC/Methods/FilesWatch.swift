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
        let id = try await context.session.watch(try params.path.resolved()) { id, changes in
            context.notify("files/didChange", DidChange(watchId: id, changes: changes.map {
                DidChange.Change(path: $0.path.description, type: $0.kind.rawValue)
            }))
        }
        return Result(watchId: id)
    }

    struct DidChange: Encodable, Sendable {
        struct Change: Encodable, Sendable {
            var path: String
            var type: String
        }
        var watchId: String
        var changes: [Change]
    }
}

/// `files/unwatch`: stops a watch; no notification for it follows the answer.
struct FilesUnwatch: RPCMethod {
    static let name = "files/unwatch"

    struct Params: Decodable, Sendable { var watchId: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NullResult {
        guard context.session.unwatch(params.watchId) else {
            throw RPCError.invalidParams("param “watchId”: no watch “\(params.watchId)”")
        }
        return NullResult()
    }
}
