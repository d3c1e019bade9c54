import CofferDesktop
import CofferCore
import FileService
import Foundation

/// A file to open elsewhere: `path` (an item of a mount), `hostPath` (an allowed host file) or
/// `bookmarkId` (a host file opened in place before).
struct OpenWithItem: Decodable, Sendable {
    var path: PathParam?
    var hostPath: String?
    var bookmarkId: Int?

    func item() throws -> ListApplications.Item {
        switch (path, hostPath, bookmarkId) {
        case (let path?, nil, nil): return .path(try path.resolved())
        case (nil, let hostPath?, nil): return .host(hostPath)
        case (nil, nil, let id?): return .bookmark(id)
        default: throw RPCError.invalidParams("give one of param “path”, param “hostPath” or param “bookmarkId”")
        }
    }
}

/// `files/applications`: the desktop's applications for a file's type, the default first:
/// `mimeType`, `applications` (`id`, `name`, `default`).
struct FilesApplications: RPCMethod {
    static let name = "files/applications"
    typealias Params = OpenWithItem
    struct Result: Encodable, Sendable {
        var mimeType: String
        var applications: [DesktopApplications.Application]
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let item = try params.item()
        let (type, applications) = try await context.perform(ListApplications(item))
        return Result(mimeType: type, applications: applications)
    }
}

/// `files/openWith`: opens the file in `application?` (an id, or a `Name`; the default when
/// left out): a read-only copy, or with `inPlace` the file itself; a host file where it is.
struct FilesOpenWith: RPCMethod {
    static let name = "files/openWith"
    struct Params: Decodable, Sendable {
        var path: PathParam?
        var hostPath: String?
        var bookmarkId: Int?
        var application: String?
        var inPlace: Bool?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> HandOver {
        let item = try OpenWithItem(path: params.path, hostPath: params.hostPath, bookmarkId: params.bookmarkId).item()
        return try await context.perform(OpenWithApplication(item, application: params.application, inPlace: params.inPlace ?? false))
    }
}
