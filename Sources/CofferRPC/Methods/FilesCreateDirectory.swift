/// `files/createDirectory`: one folder, or with `intermediate` every missing parent too.
struct FilesCreateDirectory: RPCMethod {
    static let name = "files/createDirectory"
    static let changesFiles = true
    struct Params: Decodable, Sendable { var path: PathParam; var intermediate: Bool? }
    static func auditedPaths(_ params: Params) -> [String] { [params.path.audited] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.service.createFolder(at: try params.path.resolved(),
                                                          intermediates: params.intermediate ?? false))
    }
}
