import CofferCore
import FileService

/// `files/rename`: a new name in the same folder (``RenameItem``: conflicts fail unless asked).
struct FilesRename: RPCMethod {
    static let name = "files/rename"
    struct Params: Decodable, Sendable { var path: PathParam; var newName: String; var conflict: ConflictParam? }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(RenameItem(try params.path.resolved(), to: params.newName,
                                                        conflict: params.conflict?.choice)))
    }
}
