public import CofferCore

/// Forgets a bookmark. The host file is not touched.
public struct RemoveBookmark: FileOperation {
    public static let name = "removeBookmark"

    public var id: Int

    public init(_ id: Int) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) {
        try await context.service.removeBookmark(id)
    }
}
