import CofferCore
import FileService
import Foundation

/// `files/write`: a whole file from inline data (text is written as UTF-8), at most
/// `maxInlineBytes` decoded; larger files go through `files/upload/*`.
struct FilesWrite: RPCMethod {
    static let name = "files/write"
    struct Params: Decodable, Sendable {
        var path: PathParam
        var data: String
        var encoding: DataEncoding?
        var conflict: ConflictPolicy?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        let bytes = try decode(params.data, params.encoding ?? .text, limit: context.inlineLimit)
        // Made inside `perform`, so a bad path or too much data is audited like any failed write.
        return NodeResult(try await context.perform(try write(params, bytes)))
    }

    private static func write(_ params: Params, _ bytes: Result<[UInt8], CofferError>) throws(CofferError) -> WriteFile {
        let path = try params.path.resolved()
        do {
            return WriteFile(path, bytes: try bytes.get(), conflict: params.conflict.map(ConflictChoice.policy))
        } catch {
            throw CofferError(error.kind, path: path, detail: error.detail)
        }
    }
}

/// Decodes inline data: the bytes, or `tooLarge` past `limit`; base64 that is not base64
/// is a bad param.
func decode(_ text: String, _ encoding: DataEncoding, limit: Int) throws(RPCError) -> Result<[UInt8], CofferError> {
    let tooLarge = Result<[UInt8], CofferError>.failure(CofferError(.tooLarge, detail: "\(limit) bytes"))
    let bytes: [UInt8]
    switch encoding {
    case .text:
        bytes = Array(text.utf8)
    case .base64:
        // Checked before decoding: base64 is 4 characters for every 3 bytes.
        guard text.utf8.count / 4 * 3 <= limit + 3 else { return tooLarge }
        guard let data = Data(base64Encoded: text) else { throw RPCError.invalidParams("param “data” is not valid base64") }
        bytes = Array(data)
    }
    return bytes.count <= limit ? .success(bytes) : tooLarge
}
