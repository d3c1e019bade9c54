public import CofferCore

/// Finds items whose names contain a pattern (ignoring case, accents and width), from the
/// search index when it can answer, else by walking. Hidden items and package contents are
/// left out. Results stream in walk order.
public struct SearchItems: FileOperation {
    public static let name = "search"

    public var query: SearchQuery

    public init(_ query: SearchQuery) { self.query = query }

    public func run(in context: OperationContext) async throws(CofferError) -> SearchResults { try await context.service.search(query) }
}

/// Brings the search index up to date now (from nothing with `rebuild`) and waits.
/// `nil` when the service has no index, or its database fails.
public struct UpdateSearchIndex: FileOperation {
    public static let name = "updateSearchIndex"

    public var rebuild: Bool

    public init(rebuild: Bool = false) { self.rebuild = rebuild }

    public func run(in context: OperationContext) async throws(CofferError) -> SearchIndexSummary? {
        await context.service.updateSearchIndex(rebuild: rebuild)
    }
}
