import CofferCore
import FileService

/// `bookmarks/list`: every bookmark, checked against the disk.
struct BookmarksList: RPCMethod {
    static let name = "bookmarks/list"
    struct Item: Encodable, Sendable {
        var bookmarkId: Int
        var hostPath: String
        /// `ok`, `stale` or `unreachable`, as every front end shows it.
        var state: String
        /// Deleted or replaced (`state` is `stale`).
        var stale: Bool
        /// Why it is stale or cannot be reached, in the session's language.
        var problem: String?
    }
    struct Result: Encodable, Sendable { var bookmarks: [Item] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(bookmarks: try await context.perform(ListBookmarks()).map { status in
            Item(bookmarkId: status.bookmark.id, hostPath: status.bookmark.hostPath, state: status.state.rawValue,
                 stale: status.isStale, problem: status.problem.map { $0.userMessage(in: context.language, hints: context.hints).text })
        })
    }
}
