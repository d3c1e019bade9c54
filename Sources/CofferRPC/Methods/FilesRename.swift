import CofferCore

/// `files/rename`: a new name in the same folder; conflicts fail unless asked.
struct FilesRename: RPCMethod {
    static let name = "files/rename"
    static let changesFiles = true
    struct Params: Decodable, Sendable { var path: PathParam; var newName: String; var conflict: ConflictPolicy? }
    static func auditedPaths(_ params: Params) -> [String] { [params.path.audited] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        let path = try params.path.resolved()
        try FileName.validate(params.newName, path: path)
        let renamed = try await context.service.rename(path, to: params.newName, conflict: params.conflict ?? .fail)
        return NodeResult(try await context.service.stat(renamed))
    }
}
