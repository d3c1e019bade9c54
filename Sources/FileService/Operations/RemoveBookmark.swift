public import CofferCore

/// Forgets a bookmark. The host file is not touched.
///
/// Fails with `noSuchFile` for an unknown bookmark, and `unsupported` on a service that
/// keeps no bookmarks.
public struct RemoveBookmark: FileOperation {
    public static let name = "removeBookmark"

    /// The bookmark's id, as ``OpenHostFile`` or ``ListBookmarks`` gave it.
    public var id: Int

    /// Forgets bookmark `id`.
    public init(_ id: Int) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) {
        try await context.service.removeBookmark(id)
    }
}
