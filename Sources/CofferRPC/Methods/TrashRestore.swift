import CofferCore

/// `trash/restore`: back where it was.
struct TrashRestore: RPCMethod {
    static let name = "trash/restore"
    static let changesFiles = true
    struct Params: Decodable, Sendable { var trashId: String; var conflict: ConflictPolicy? }
    static func auditedPaths(_ params: Params) -> [String] { ["trash:/" + params.trashId] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        let restored = try await context.service.restore(params.trashId, conflict: params.conflict ?? .fail)
        return NodeResult(try await context.service.stat(restored))
    }
}
