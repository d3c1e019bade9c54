public import CofferCore

/// Finds items whose names contain a pattern (ignoring case, accents and width), from the
/// search index when it can answer, else by walking. Hidden items and package contents are
/// left out. Results stream (``SearchResults/events``), in walk order unless the query
/// names an order.
///
/// Fails, before anything is reported, with `noSuchFile` when the scope is missing,
/// `notADirectory` when it is a file, `invalidArgument` for an unknown type identifier or a
/// negative limit, and `unknownMount` for a mount the service does not have.
public struct SearchItems: FileOperation {
    public static let name = "search"

    /// What is searched for, and where.
    public var query: SearchQuery

    /// Searches as `query` says.
    public init(_ query: SearchQuery) { self.query = query }

    public func run(in context: OperationContext) async throws(CofferError) -> SearchResults { try await context.service.search(query) }
}

/// Brings the search index up to date now (from nothing with `rebuild`) and waits.
/// `nil` when the service has no index, or its database fails.
public struct UpdateSearchIndex: FileOperation {
    public static let name = "updateSearchIndex"

    /// Whether the index is dropped and built again from nothing.
    public var rebuild: Bool

    /// Brings the index up to date, from nothing with `rebuild`.
    public init(rebuild: Bool = false) { self.rebuild = rebuild }

    public func run(in context: OperationContext) async throws(CofferError) -> SearchIndexSummary? {
        await context.service.updateSearchIndex(rebuild: rebuild)
    }
}
