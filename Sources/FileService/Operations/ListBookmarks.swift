public import CofferCore

/// Every bookmark, checked: a file renamed within its folder is found again (and the
/// bookmark updated); a deleted or replaced one is reported stale.
public struct ListBookmarks: FileOperation {
    public static let name = "listBookmarks"

    /// Lists the bookmarks.
    public init() {}

    public func run(in context: OperationContext) async throws(CofferError) -> [BookmarkStatus] {
        try await context.service.bookmarks(policy: context.session.hostPolicy)
    }
}
