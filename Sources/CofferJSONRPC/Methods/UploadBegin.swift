import FileService
import CofferCore

/// `files/upload/begin`: starts a chunked upload; nothing is visible until commit.
struct UploadBegin: RPCMethod {
    static let name = "files/upload/begin"
    struct Params: Decodable, Sendable { var path: PathParam; var conflict: ConflictPolicy?; var size: Int64?; var resumable: Bool? }
    struct Result: Encodable, Sendable { var uploadId: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        Result(uploadId: try await context.perform(BeginUpload(try params.path.resolved(), conflict: params.conflict.map(ConflictChoice.policy),
                                                               size: params.size, resumable: params.resumable ?? false)))
    }
}
