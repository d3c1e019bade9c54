/// `files/trash`: to the trash, restorable; the answer names it there.
struct FilesTrash: RPCMethod {
    static let name = "files/trash"
    static let changesFiles = true
    struct Params: Decodable, Sendable { var path: PathParam }
    struct Result: Encodable, Sendable { var trashId: String; var originalPath: String }
    static func auditedPaths(_ params: Params) -> [String] { [params.path.audited] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let item = try await context.service.trash(try params.path.resolved())
        return Result(trashId: item.id, originalPath: item.originalPath.description)
    }
}
