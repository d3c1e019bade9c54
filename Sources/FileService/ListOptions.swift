public import CofferCore

/// Which items a ``ListFolder`` returns, in which order, and which page of them.
public struct ListOptions: Sendable, Hashable {
    /// Include dot-names and names in `.hidden`.
    public var includeHidden: Bool
    /// The order after folders first: by name (natural, case- and accent-insensitive),
    /// date, size or kind, ascending or descending.
    public var order: SortOrder
    /// Index of the first item of the page.
    public var offset: Int
    /// At most this many items; `nil` for all.
    public var limit: Int?
    /// Whether items' backup exclusion is read. A front end that never shows it (the REPL's
    /// `ls`) turns it off, and the backend may then skip reading it: the items' exclusion
    /// reads `false`. Everything else is the same.
    public var readsBackupExclusion: Bool

    /// Options as given: by default every visible item, by name, in one page.
    public init(includeHidden: Bool = false, order: SortOrder = .byName, offset: Int = 0, limit: Int? = nil,
                readsBackupExclusion: Bool = true) {
        self.includeHidden = includeHidden
        self.order = order
        self.offset = offset
        self.limit = limit
        self.readsBackupExclusion = readsBackupExclusion
    }
}

/// One page of a sorted folder listing.
public struct ListPage: Sendable, Hashable {
    /// The page's items, in order.
    public var items: [FileNode]
    /// Index of the first item in the whole listing.
    public var offset: Int
    /// How many items the whole listing has.
    public var total: Int

    /// The offset of the next page, or `nil` after the last one.
    public var nextOffset: Int? { offset + items.count < total ? offset + items.count : nil }
}

/// What ``MeasureDiskUsage`` adds up.
public struct DiskUsage: Sendable {
    /// The files' sizes added up, in bytes.
    public var bytes: Int64 = 0
    /// How many files.
    public var files = 0
    /// How many folders and packages below the start (the start not counted).
    public var folders = 0
    /// Why each folder that could not be read was left out (its size is not in the total).
    public var unreadable: [CofferError] = []

    /// Nothing counted yet.
    public init() {}
}
