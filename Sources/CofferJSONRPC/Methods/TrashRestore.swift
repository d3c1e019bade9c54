import FileService
import CofferCore

/// `trash/restore`: back where it was.
struct TrashRestore: RPCMethod {
    static let name = "trash/restore"
    struct Params: Decodable, Sendable { var trashId: String; var conflict: ConflictParam? }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(RestoreItem(.id(params.trashId), conflict: params.conflict?.choice)))
    }
}
