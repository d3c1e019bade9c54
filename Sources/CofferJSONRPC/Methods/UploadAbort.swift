import FileService
/// `files/upload/abort`: discards an upload.
struct UploadAbort: RPCMethod {
    static let name = "files/upload/abort"
    struct Params: Decodable, Sendable { var uploadId: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NullResult {
        try await context.perform(AbortUpload(params.uploadId))
        return NullResult()
    }
}
