import CofferDesktop
import CofferCore
import FileService
import Foundation

/// `files/recent`: the files Coffer used (opened in place, edited, imported, exported,
/// downloaded), newest first, from the desktop's recent files.
struct FilesRecent: RPCMethod {
    static let name = "files/recent"
    struct Item: Encodable, Sendable {
        /// The item, for a file of a local mount.
        var path: String?
        /// The file on this computer, for one outside the mounts (never the container's location).
        var hostPath: String?
        var used: Date
        var mimeType: String?
    }
    struct Result: Encodable, Sendable { var files: [Item] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(files: try await context.perform(ListRecentFiles()).map { file in
            Item(path: file.path?.description, hostPath: file.hostPath, used: file.used, mimeType: file.mimeType)
        })
    }
}
