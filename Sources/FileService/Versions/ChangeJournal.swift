public import CofferCore
import CofferSearch
public import Foundation
import Synchronization

/// One change a session made, as the journal keeps it to undo it.
public struct JournalChange: Sendable, Hashable {
    /// What was done.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// An item made where there was none: a file written, copied, imported or uploaded.
        case create
        /// A folder made.
        case folder
        /// A file's content replaced (what it had is ``JournalChange/keptVersion``, or in the trash).
        case replace
        /// An item moved or renamed from ``JournalChange/source``.
        case move
        /// An item moved to the trash as ``JournalChange/trashID``.
        case trash
        /// The trashed item ``JournalChange/trashID`` put back.
        case restore
        /// Tags changed from ``JournalChange/tagsBefore`` to ``JournalChange/tagsAfter``.
        case tag
    }

    /// Its place in the journal: later changes have higher numbers.
    public var sequence: Int
    /// The session that made it (``Session/id``).
    public var session: String
    /// When.
    public var date: Date
    /// What was done.
    public var kind: Kind
    /// The item, where the change left it (for ``Kind/trash``, where it was).
    public var path: VirtualPath
    /// Where a moved item came from.
    public var source: VirtualPath?
    /// The trash item a ``Kind/trash`` made, or a ``Kind/restore`` took out.
    public var trashID: String?
    /// What the change displaced at ``path``, kept as this version.
    public var keptVersion: Int?
    /// What the change displaced at ``path``, moved to the trash as this item.
    public var displacedTrashID: String?
    /// The tags before and after a ``Kind/tag``.
    public var tagsBefore: [String]?
    /// The tags after a ``Kind/tag``.
    public var tagsAfter: [String]?
    /// The file's version (`FileVersion`) just after the change, to tell a later change.
    public var state: String?
    /// The session whose undo reverted it, once one has.
    public var undoneBy: String?
}

/// A session that changed something, as ``Session`` lists them for undoing.
public struct ChangedSession: Sendable, Hashable {
    /// Its ``Session/id``.
    public var id: String
    /// Its front end.
    public var frontEnd: String
    /// When it made its first change.
    public var started: Date
    /// How many changes it made.
    public var count: Int
    /// How many of them an undo reverted.
    public var undone: Int
    /// The session this one undid, for a session that is an undo.
    public var undoes: String?
}

/// A change as the engine notes it while an operation runs, before the session journals it.
struct ChangeDraft: Sendable {
    var kind: JournalChange.Kind
    var path: VirtualPath
    var source: VirtualPath?
    var trashID: String?
    var keptVersion: Int?
    var displacedTrashID: String?
    var tagsBefore: [String]?
    var tagsAfter: [String]?
    var state: String?
}

extension VersionStore {
    private static let changeColumns = """
        seq, session, at, kind, mount, path, fromMount, fromPath, trashId, version, displacedTrash, tagsBefore, tagsAfter, state, undoneBy
        """

    private static func change(_ row: SQLiteStatement) -> JournalChange {
        func tags(_ column: Int32) -> [String]? {
            row.optionalText(column).map { $0.isEmpty ? [] : $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        }
        let source = row.optionalText(6).map { VirtualPath(mount: $0, trustedComponents: row.components(7)) }
        return JournalChange(
            sequence: row.int(0), session: row.text(1), date: Date(timeIntervalSince1970: row.double(2) ?? 0),
            kind: JournalChange.Kind(rawValue: row.text(3)) ?? .create,
            path: VirtualPath(mount: row.text(4), trustedComponents: row.components(5)), source: source,
            trashID: row.optionalText(8), keptVersion: row.optionalInt64(9).map(Int.init), displacedTrashID: row.optionalText(10),
            tagsBefore: tags(11), tagsAfter: tags(12), state: row.optionalText(13), undoneBy: row.optionalText(14))
    }

    /// Journals `changes` of the session `session`, in order.
    func record(_ changes: [ChangeDraft], session: String, frontEnd: String, undoes: String? = nil,
                marking reverted: Int? = nil, now: Date = Date()) async throws(CofferError) {
        guard !changes.isEmpty || reverted != nil else { return }
        let at = now.timeIntervalSince1970
        try await withIndex { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                // (An undo that reverted a change by changing nothing is still listed: marks name it.)
                try connection.statement("INSERT OR IGNORE INTO sessions(id, frontEnd, started, undoes) VALUES(?, ?, ?, ?)")
                    .bind(1, session).bind(2, frontEnd).bind(3, at).bind(4, undoes).run()
                if let reverted {
                    try connection.statement("UPDATE changes SET undoneBy = ? WHERE seq = ?").bind(1, session).bind(2, reverted).run()
                }
                let insert = try connection.statement("""
                    INSERT INTO changes(session, at, kind, mount, path, fromMount, fromPath, trashId, version, displacedTrash,
                                        tagsBefore, tagsAfter, state) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for change in changes {
                    insert.reset()
                    try insert.bind(1, session).bind(2, at).bind(3, change.kind.rawValue).bind(4, change.path.mount)
                        .bind(5, change.path.relativeString).bind(6, change.source?.mount).bind(7, change.source?.relativeString)
                        .bind(8, change.trashID).bind(9, change.keptVersion.map(Int64.init))
                        .bind(10, change.displacedTrashID).bind(11, change.tagsBefore?.joined(separator: "\n"))
                        .bind(12, change.tagsAfter?.joined(separator: "\n")).bind(13, change.state).run()
                }
            }
        }
    }

    /// The sessions that changed something, the most recent first (at most `limit`).
    func changedSessions(limit: Int) async throws(CofferError) -> [ChangedSession] {
        try await withIndex { connection throws(SQLiteError) in
            let row = try connection.statement("""
                SELECT s.id, s.frontEnd, s.started, s.undoes, COUNT(c.seq), COUNT(c.undoneBy)
                FROM sessions s LEFT JOIN changes c ON c.session = s.id
                GROUP BY s.id ORDER BY s.started DESC, s.rowid DESC LIMIT ?
                """).bind(1, limit)
            var found: [ChangedSession] = []
            while try row.step() {
                found.append(ChangedSession(id: row.text(0), frontEnd: row.text(1), started: Date(timeIntervalSince1970: row.double(2) ?? 0),
                                            count: row.int(4), undone: row.int(5), undoes: row.optionalText(3)))
            }
            return found
        }
    }

    /// The session `id`, if it changed anything.
    func changedSession(_ id: String) async throws(CofferError) -> ChangedSession? {
        try await withIndex { connection throws(SQLiteError) in
            let row = try connection.statement("""
                SELECT s.id, s.frontEnd, s.started, s.undoes, COUNT(c.seq), COUNT(c.undoneBy)
                FROM sessions s LEFT JOIN changes c ON c.session = s.id WHERE s.id = ? GROUP BY s.id
                """).bind(1, id)
            guard try row.step() else { return nil }
            return ChangedSession(id: row.text(0), frontEnd: row.text(1), started: Date(timeIntervalSince1970: row.double(2) ?? 0),
                                  count: row.int(4), undone: row.int(5), undoes: row.optionalText(3))
        }
    }

    /// The changes of session `id`, newest first.
    func changes(of id: String) async throws(CofferError) -> [JournalChange] {
        try await withIndex { connection throws(SQLiteError) in
            let row = try connection.statement("SELECT \(Self.changeColumns) FROM changes WHERE session = ? ORDER BY seq DESC").bind(1, id)
            var found: [JournalChange] = []
            while try row.step() { found.append(Self.change(row)) }
            return found
        }
    }

    /// The first change after `sequence`, by a session other than `session`, to the item at
    /// `path`, to an item inside it, or to a folder holding it.
    func laterChange(touching path: VirtualPath, after sequence: Int, otherThan session: String,
                     orUndo undo: String) async throws(CofferError) -> JournalChange? {
        let mount = path.mount, relative = path.relativeString
        return try await withIndex { connection throws(SQLiteError) in
            // Below it: from `a/b/` up to `a/b0`; holding it: a path that `a/b/` begins with, then `/`.
            let row = try connection.statement("""
                SELECT \(Self.changeColumns) FROM changes WHERE seq > ?1 AND session <> ?2 AND session <> ?7
                    AND session NOT IN (SELECT id FROM sessions WHERE undoes = ?2) AND (
                    (mount = ?3 AND (path = ?6 OR (path > ?4 AND path < ?5) OR substr(?4, 1, length(path) + 1) = path || '/'))
                    OR (fromMount = ?3 AND (fromPath = ?6 OR (fromPath > ?4 AND fromPath < ?5)
                                            OR substr(?4, 1, length(fromPath) + 1) = fromPath || '/')))
                ORDER BY seq LIMIT 1
                """).bind(1, sequence).bind(2, session).bind(3, mount).bind(4, relative + "/").bind(5, relative + "0")
                .bind(6, relative).bind(7, undo)
            return try row.step() ? Self.change(row) : nil
        }
    }

    /// Makes version `id` a version of the file at `path` (an undo putting it back where it was kept).
    func reassign(_ id: Int, to path: VirtualPath) async throws(CofferError) {
        try await withIndex { connection throws(SQLiteError) in
            try connection.statement("UPDATE versions SET mount = ?, path = ?, trash = NULL WHERE id = ?")
                .bind(1, path.mount).bind(2, path.relativeString).bind(3, id).run()
        }
    }
}
