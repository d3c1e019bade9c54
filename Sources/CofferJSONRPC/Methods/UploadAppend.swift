import FileService
/// `files/upload/append`: the next chunk, base64, at the offset received so far.
struct UploadAppend: RPCMethod {
    static let name = "files/upload/append"
    struct Params: Decodable, Sendable { var uploadId: String; var offset: Int64; var data: String }
    struct Result: Encodable, Sendable { var received: Int64 }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let bytes = try decode(params.data, .base64, limit: context.limits.maxChunkBytes).get()
        return Result(received: try await context.perform(AppendUpload(params.uploadId, offset: params.offset, bytes: bytes)))
    }
}
