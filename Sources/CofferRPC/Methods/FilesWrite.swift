import CofferCore
import Foundation

/// `files/write`: a whole file from inline data (text is written as UTF-8), at most
/// `maxInlineBytes` decoded; larger files go through `files/upload/*`.
struct FilesWrite: RPCMethod {
    static let name = "files/write"
    static let changesFiles = true
    struct Params: Decodable, Sendable {
        var path: PathParam
        var data: String
        var encoding: DataEncoding?
        var conflict: ConflictPolicy?
    }
    static func auditedPaths(_ params: Params) -> [String] { [params.path.audited] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        let path = try params.path.resolved()
        let bytes = try decode(params.data, params.encoding ?? .text, path: path, limit: context.limits.maxInlineBytes)
        return NodeResult(try await context.service.writeFile(path, bytes: bytes, conflict: params.conflict ?? .fail))
    }
}

/// Decodes inline data, refusing more than `limit` bytes with `tooLarge`.
func decode(_ text: String, _ encoding: DataEncoding, path: VirtualPath?, limit: Int) throws -> [UInt8] {
    let bytes: [UInt8]
    switch encoding {
    case .text:
        bytes = Array(text.utf8)
    case .base64:
        // Checked before decoding: base64 is 4 characters for every 3 bytes.
        guard text.utf8.count / 4 * 3 <= limit + 3 else { throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes") }
        guard let data = Data(base64Encoded: text) else { throw RPCError.invalidParams("param “data” is not valid base64") }
        bytes = Array(data)
    }
    guard bytes.count <= limit else { throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes") }
    return bytes
}
