import FileService

/// `bookmarks/list`: every bookmark, checked against the disk.
struct BookmarksList: RPCMethod {
    static let name = "bookmarks/list"
    struct Item: Encodable, Sendable { var bookmarkId: Int; var hostPath: String; var stale: Bool }
    struct Result: Encodable, Sendable { var bookmarks: [Item] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(bookmarks: try await context.perform(ListBookmarks()).map { status in
            Item(bookmarkId: status.bookmark.id, hostPath: status.bookmark.hostPath, stale: status.problem != nil)
        })
    }
}
