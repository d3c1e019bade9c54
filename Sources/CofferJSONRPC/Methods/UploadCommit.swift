import FileService
/// `files/upload/commit`: places the uploaded file (conflicts as chosen at begin); with
/// `ifVersion`, a conditional save over the file at that version.
struct UploadCommit: RPCMethod {
    static let name = "files/upload/commit"
    struct Params: Decodable, Sendable {
        var uploadId: String
        var ifVersion: VersionParam?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(CommitUpload(params.uploadId, ifVersion: params.ifVersion?.version)))
    }
}
