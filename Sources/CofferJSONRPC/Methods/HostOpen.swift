import CofferCore
import FileService
import Foundation

/// `host/open`: a host file opened in place and bookmarked. Its node describes the host
/// file: `path` is the host path, `type` what its content and name say together.
struct HostOpen: RPCMethod {
    static let name = "host/open"
    struct Params: Decodable, Sendable { var hostPath: String }
    struct Node: Encodable, Sendable {
        var path: String
        var name: String
        var kind = "file"
        var size: Int64
        var modified: Date
        var hidden: Bool
        var type: String
        var typeByName: String
        var typeMismatch: Bool
        /// The version of its content, for a save conditional on it (`files/write` with `bookmarkId`).
        var version: String?
    }
    struct Result: Encodable, Sendable { var bookmarkId: Int; var node: Node }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let opened = try await context.perform(OpenHostFile(params.hostPath))
        let bookmark = opened.bookmark
        return Result(bookmarkId: bookmark.id, node: Node(
            path: bookmark.hostPath, name: bookmark.name, size: bookmark.size, modified: bookmark.modificationDate,
            hidden: FileNode.isDotName(bookmark.name), type: opened.type.effective, typeByName: opened.type.byName,
            typeMismatch: opened.type.isMismatch, version: opened.version?.token))
    }
}
