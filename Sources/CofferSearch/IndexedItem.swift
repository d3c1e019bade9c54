import CofferCore
import Foundation

/// One item of a folder as the index records it: what a walk would find by name, and what
/// the search filters ask of it (``SearchFilters``) — size, modification time and tags — so
/// a filtered search is answered by the rows instead of reading every match from storage.
struct IndexedItem: Sendable {
    /// The columns the filters read.
    struct Facts: Sendable, Equatable {
        /// The content's size (files only: folders, links and devices have none).
        var size: Int64?
        /// Seconds since the reference date.
        var modified: Double?
        /// `,tag,tag,` (tags hold no commas), `nil` without tags: one `instr` finds a tag.
        var tags: String?

        init(size: Int64?, modified: Double?, tags: [String]) {
            self.size = size
            self.modified = modified
            self.tags = tags.isEmpty ? nil : "," + tags.joined(separator: ",") + ","
        }

        /// From a row's columns `first`, `first + 1`, `first + 2`.
        init(_ row: SQLiteStatement, from first: Int32) {
            size = row.optionalInt64(first)
            modified = row.double(first + 1)
            tags = row.optionalText(first + 2)
        }

        func update(_ key: String, in connection: SQLiteConnection) throws(SQLiteError) {
            try connection.statement("UPDATE entries SET size = ?2, modified = ?3, tags = ?4 WHERE path = ?1")
                .bind(1, key).bind(2, size).bind(3, modified).bind(4, tags).run()
        }
    }

    var name: String
    var kind: FolderEntry.Kind
    var isHidden: Bool
    var facts: Facts

    init(_ node: FileNode, tags: [String]) {
        name = node.name
        kind = FolderEntry.Kind(of: node)
        isHidden = node.isHidden
        let modified = node.knownModificationDate?.timeIntervalSinceReferenceDate
        facts = Facts(size: node.contentSize, modified: modified, tags: tags)
    }

    /// The conditions on rows (aliased `e`) that `filters` put, as `AND …` to add to a query,
    /// their parameters numbered from `first`, with their values in that order; empty for no
    /// filter. As ``SearchFilters/admits(_:)`` judges: a time from `after` included to `before`
    /// excluded, sizes for files only, every tag required.
    static func conditions(for filters: SearchFilters, from first: Int) -> (sql: String, values: [FilterValue]) {
        var sql = ""
        var values: [FilterValue] = []
        func add(_ condition: String, _ value: FilterValue) {
            values.append(value)
            sql += " AND " + condition.replacingOccurrences(of: "?", with: "?\(first + values.count - 1)")
        }
        if let after = filters.modifiedAfter { add("e.modified >= ?", .real(after.timeIntervalSinceReferenceDate)) }
        if let before = filters.modifiedBefore { add("e.modified < ?", .real(before.timeIntervalSinceReferenceDate)) }
        if let minimum = filters.minimumSize { add("e.size >= ?", .integer(minimum)) }
        if let maximum = filters.maximumSize { add("e.size < ?", .integer(maximum)) }
        // Said in so many words, so that SQLite reads only the tagged rows (a partial index).
        if !filters.tags.isEmpty { sql += " AND e.tags IS NOT NULL" }
        for tag in filters.tags { add("instr(e.tags, ?) > 0", .text("," + tag + ",")) }
        return (sql, values)
    }

    enum FilterValue: Sendable {
        case real(Double)
        case integer(Int64)
        case text(String)

        func bind(to statement: SQLiteStatement, at index: Int32) {
            switch self {
            case .real(let value): statement.bind(index, value)
            case .integer(let value): statement.bind(index, Optional(value))
            case .text(let value): statement.bind(index, value)
            }
        }
    }
}
