import CofferCore
import FileService
import Foundation

/// `files/versions`: the versions of a file, newest first.
struct FilesVersions: RPCMethod {
    static let name = "files/versions"
    struct Params: Decodable, Sendable { var path: PathParam }
    struct Version: Encodable, Sendable {
        var id: Int
        var date: String
        var size: Int64
        var type: String
        var keptAt: String
        var session: String?
        var frontEnd: String?

        init(_ version: SavedVersion) {
            id = version.id
            date = Timestamp.iso8601(version.date)
            size = version.size
            type = version.typeIdentifier
            keptAt = Timestamp.iso8601(version.keptAt)
            session = version.session
            frontEnd = version.frontEnd
        }
    }
    struct Result: Encodable, Sendable {
        var path: String
        var versions: [Version]
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let path = try params.path.resolved()
        return Result(path: path.description, versions: try await context.perform(ListVersions(path)).map(Version.init))
    }
}

/// `files/restoreVersion`: a version back over its file (whose content becomes a version in
/// turn), or beside it as `as`.
struct FilesRestoreVersion: RPCMethod {
    static let name = "files/restoreVersion"
    struct Params: Decodable, Sendable {
        var path: PathParam
        var id: Int
        var `as`: String?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(RestoreVersion(params.id, of: try params.path.resolved(), as: params.as)))
    }
}
