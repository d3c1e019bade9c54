import CofferCore
import FileService

/// `files/trash`: to the trash, restorable; the answer names it there.
struct FilesTrash: RPCMethod {
    static let name = "files/trash"
    struct Params: Decodable, Sendable { var path: PathParam }
    struct Result: Encodable, Sendable { var trashId: String; var originalPath: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let item = try await context.perform(TrashItems([try params.path.resolved()]))[0].get()
        return Result(trashId: item.id, originalPath: item.originalPath.description)
    }
}
