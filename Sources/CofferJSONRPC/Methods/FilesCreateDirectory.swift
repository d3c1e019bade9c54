import FileService

/// `files/createDirectory`: one folder, or with `intermediate` every missing parent too.
struct FilesCreateDirectory: RPCMethod {
    static let name = "files/createDirectory"
    struct Params: Decodable, Sendable { var path: PathParam; var intermediate: Bool? }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(CreateFolder(try params.path.resolved(),
                                                          intermediates: params.intermediate ?? false)))
    }
}
