import CSQLite
import CofferRuntime
import CofferCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Passes (walking the mount and comparing folder times, to bring the index up to date), keys,
/// and the database beneath them.
extension SearchIndex {

    /// SQLite's page cache, in KiB, while a pass writes and while name queries read (other
    /// reads, such as the summary's counts, keep whichever is set).
    static let passCacheKiB = 2_000
    static let queryCacheKiB = 16_000

    /// Compares every indexed folder's modification time with its recorded stamp and
    /// rescans those that differ, that have no stamp, or that were never read (a build cut
    /// short); drops folders that are gone. From an empty database this is the first build.
    /// Marks the index complete when it gets through.
    func runPass() async {
        await writer.acquire()
        let plan = await passPlan()
        await writer.release()
        guard let plan else { return }
        // A pass writes every page once and reads few twice: a small page cache keeps a build
        // of 100,000 items under 30 MB; a name query, which reads the same pages again and
        // again, takes the large one back (``query(_:below:)``).
        let _: Void? = await database { connection throws(SQLiteError) in
            try connection.execute("PRAGMA cache_size = -\(Self.passCacheKiB);")
        }
        let scanned = await scan(plan)
        let marked: Void? = !scanned ? nil : await database { [complete = isComplete] connection throws(SQLiteError) in
            if !complete { return try Self.markComplete(connection) }
            // An index completed by an earlier version has no counts yet.
            if try !connection.statement("SELECT 1 FROM trigrams LIMIT 1").step() { try Self.countTrigrams(connection) }
        }
        guard scanned else { return }
        state.withLock { state in
            if marked != nil { state.complete = true }
            state.statistics.passes += 1
        }
    }

    /// Records that the index is complete. The first time, the name index is built in one
    /// go from the rows (much faster than row by row during the build, when nothing
    /// queries it) and triggers then keep it in step with every later change.
    static func markComplete(_ connection: SQLiteConnection) throws(SQLiteError) {
        let triggers = try connection.statement(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'entries_added'")
        let hasTriggers = try triggers.step()
        triggers.reset()
        try connection.transaction { () throws(SQLiteError) in
            if !hasTriggers {
                // Then merged into one segment: a query reads each trigram's list once,
                // not a piece of it from every segment the rebuild wrote (twice as fast).
                try connection.execute("""
                    INSERT INTO names(names) VALUES ('rebuild');
                    INSERT INTO names(names) VALUES ('optimize');
                    CREATE TRIGGER entries_added AFTER INSERT ON entries BEGIN
                        INSERT INTO names(rowid, folded) VALUES (new.id, new.folded);
                    END;
                    CREATE TRIGGER entries_removed AFTER DELETE ON entries BEGIN
                        INSERT INTO names(names, rowid, folded) VALUES ('delete', old.id, old.folded);
                    END;
                    """)
            }
            try connection.statement("INSERT OR REPLACE INTO meta(key, value) VALUES ('complete', '1')").run()
            try countTrigrams(connection)
        }
    }

    /// Records how many names hold each trigram, from the name index: a query then reads
    /// the lists of its pattern's two rarest trigrams instead of all of them. Counted when
    /// the index is first complete and after a rebuild; the figures only steer which lists
    /// are read, so counts grown stale cost speed, never a match.
    static func countTrigrams(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("""
            CREATE VIRTUAL TABLE IF NOT EXISTS temp.names_vocabulary USING fts5vocab(main, names, 'row');
            DELETE FROM trigrams;
            INSERT INTO trigrams(term, names) SELECT term, doc FROM temp.names_vocabulary;
            """)
    }

    /// The folders a pass must read, with those that are gone already dropped: those whose
    /// time changed, or with `full` every one.
    func passPlan(full: Bool = false) async -> [String]? {
        let registry = registry
        // Every recorded folder and its stamp; and folder rows that were never read.
        let recorded: (stamps: [(String, Double?)], unread: [String])? = await database { connection throws(SQLiteError) in
            var stamps: [(String, Double?)] = []
            let all = try connection.statement("SELECT path, stamp FROM folders")
            while try all.step() { stamps.append((all.text(0), all.double(1))) }
            var unread: [String] = []
            let orphans = try connection.statement(
                "SELECT e.path, e.name FROM entries e WHERE e.kind = 0 AND NOT EXISTS (SELECT 1 FROM folders f WHERE f.path = e.path)")
            while try orphans.step() {
                if !registry.isPackage(folderNamed: orphans.text(1)) { unread.append(orphans.text(0)) }
            }
            return (stamps, unread)
        }
        guard let recorded else { return nil }
        let keys = recorded.stamps.map(\.0)
        guard let dates = try? await backend.folderModificationDates(at: keys.map(path(forKey:))) else { return nil }
        var gone: [String] = []
        var changed: [String] = recorded.stamps.isEmpty ? [""] : []
        for (index, (key, stamp)) in recorded.stamps.enumerated() {
            guard let date = dates[index] else { gone.append(key); continue }
            if full || stamp != date.timeIntervalSinceReferenceDate { changed.append(key) }
        }
        if !gone.isEmpty {
            let goneKeys = gone
            let dropped: Void? = await database { connection throws(SQLiteError) in
                try connection.transaction { () throws(SQLiteError) in
                    for key in goneKeys where !key.isEmpty { try Self.deleteTree(key, in: connection) }
                }
            }
            guard dropped != nil else { return nil }
        }
        return changed + recorded.unread
    }

    /// Reads the folders `keys` and writes what they hold, then goes on into subfolders
    /// that have never been read, a batch of folders at a time (each batch one transaction,
    /// so a build cut short keeps what it did). `false` when the database failed.
    func scan(_ keys: [String]) async -> Bool {
        var pending = keys
        var scanned = 0
        defer { state.withLock { [scanned] in $0.statistics.foldersScanned += scanned } }
        while !pending.isEmpty {
            if Task.isCancelled { return false }
            let allowed = state.withLock { state -> Bool in
                guard let left = state.batchesLeft else { return true }
                state.batchesLeft = left - 1
                return left > 0
            }
            if !allowed { return false }
            let batch = Array(pending.suffix(Self.batchSize))
            pending.removeLast(batch.count)
            await writer.acquire()
            let listings = await items(inFoldersAt: batch.map(path(forKey:)))
            let readAt = Date()
            let dates = (try? await backend.folderModificationDates(at: batch.map(path(forKey:))))
                ?? Array(repeating: nil, count: batch.count)
            let registry = registry
            let found = await database { connection throws(SQLiteError) -> [String] in
                try connection.transaction { () throws(SQLiteError) -> [String] in
                    var found: [String] = []
                    for (index, key) in batch.enumerated() {
                        guard case .success(let entries) = listings[index], let date = dates[index] else {
                            // Unreadable or gone: what was recorded stays, without a stamp, so
                            // the next pass tries again.
                            try connection.statement("UPDATE folders SET stamp = NULL WHERE path = ?1").bind(1, key).run()
                            continue
                        }
                        // The date is read after the listing: a change in between shows as a
                        // difference next time. One too close to now is not trusted at all.
                        let stamp = readAt.timeIntervalSince(date) >= Self.racyInterval ? date.timeIntervalSinceReferenceDate : nil
                        found += try Self.write(entries, ofFolder: key, stamp: stamp, registry: registry, in: connection)
                    }
                    return found
                }
            }
            await writer.release()
            guard let found else { return false }
            scanned += batch.count
            pending += found
        }
        return true
    }

    /// What a folder holds, as the index records it: every item with its size, time and
    /// tags (one listing and, where the backend has tags, one tag read a folder).
    func items(inFoldersAt paths: [VirtualPath]) async -> [Result<[IndexedItem], CofferError>] {
        var results: [Result<[IndexedItem], CofferError>] = []
        for path in paths {
            do {
                let nodes = try await backend.contentsOfFolder(at: path, readingBackupExclusion: false)
                let visible = nodes.filter { !$0.isHidden }
                let tags = await (backend as? any TaggingBackend)?.tags(ofItems: visible.map(\.name), inFolderAt: path)
                var items = nodes.filter(\.isHidden).map { IndexedItem($0, tags: []) }
                for (index, node) in visible.enumerated() { items.append(IndexedItem(node, tags: tags?[index] ?? [])) }
                results.append(.success(items))
            } catch {
                results.append(.failure(CofferError.wrapping(error, path: path)))
            }
        }
        return results
    }

    /// Makes the rows of a folder's children match `items`, and records its stamp;
    /// returns its subfolders that have never been read.
    static func write(_ items: [IndexedItem], ofFolder key: String, stamp: Double?, registry: TypeRegistry,
                              in connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        var recorded: [String: (kind: Int, facts: IndexedItem.Facts)] = [:]
        let existing = try connection.statement("SELECT name, kind, size, modified, tags FROM entries WHERE parent = ?1")
            .bind(1, key)
        while try existing.step() { recorded[existing.text(0)] = (existing.int(1), IndexedItem.Facts(existing, from: 2)) }
        var visible: [String: IndexedItem] = [:]
        for item in items where !item.isHidden { visible[item.name] = item }
        for (name, row) in recorded where visible[name].map({ Self.code($0.kind) }) != row.kind {
            try deleteTree(child(name, of: key), in: connection)
        }
        let folderKey = sortKey(ofFolder: key)
        var subfolders: [String] = []
        for (name, item) in visible {
            let kind = item.kind
            if let row = recorded[name], row.kind == code(kind) {
                // The same item: its size, time or tags may have changed.
                if row.facts != item.facts { try item.facts.update(child(name, of: key), in: connection) }
            } else {
                try insert(item, parentKey: key, parentSortKey: folderKey, in: connection)
            }
            guard kind == .folder && !registry.isPackage(folderNamed: name) else { continue }
            let childKey = child(name, of: key)
            if try !connection.statement("SELECT 1 FROM folders WHERE path = ?1").bind(1, childKey).step() {
                subfolders.append(childKey)
            }
        }
        let hasHiddenList = items.contains { $0.name == FolderEntry.hiddenListName }
        try connection.statement("INSERT OR REPLACE INTO folders(path, stamp, hidden) VALUES (?1, ?2, ?3)")
            .bind(1, key).bind(2, stamp).bind(3, hasHiddenList ? 1 : 0).run()
        return subfolders
    }

    static func insert(_ item: IndexedItem, parentKey: String, parentSortKey: [UInt8],
                               in connection: SQLiteConnection) throws(SQLiteError) {
        let name = item.name
        try connection.statement(
            "INSERT INTO entries(path, parent, name, folded, kind, sortkey, size, modified, tags) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
            .bind(1, child(name, of: parentKey)).bind(2, parentKey).bind(3, name)
            .bind(4, NamePattern.fold(name)).bind(5, code(item.kind))
            .bind(6, parentSortKey + PathSortKey.component(name, isFile: item.kind != .folder))
            .bind(7, item.facts.size).bind(8, item.facts.modified).bind(9, item.facts.tags)
            .run()
    }

    /// Drops the row at `key`, everything below it, and the folders' stamps.
    static func deleteTree(_ key: String, in connection: SQLiteConnection) throws(SQLiteError) {
        for table in ["entries", "folders"] {
            try connection.statement("DELETE FROM \(table) WHERE path = ?1 OR (path >= ?2 AND path < ?3)")
                .bind(1, key).bind(2, key + "/").bind(3, key + "0").run()
        }
    }

    static func code(_ kind: FolderEntry.Kind) -> Int {
        switch kind {
        case .folder: 0
        case .file: 1
        case .special: 2
        }
    }

    // MARK: Keys

    /// A path inside the mount as the index stores it: components joined with `/`, the
    /// root being the empty string.
    static func key(_ path: VirtualPath) -> String { path.components.joined(separator: "/") }

    static func child(_ name: String, of key: String) -> String { key.isEmpty ? name : key + "/" + name }

    static func name(ofKey key: String) -> String {
        key.lastIndex(of: "/").map { String(key[key.index(after: $0)...]) } ?? key
    }

    func path(forKey key: String) -> VirtualPath {
        VirtualPath(mount: mount, trustedComponents: key.split(separator: "/").map(String.init))
    }

    /// The sort key of a folder: its components', all folders.
    static func sortKey(ofFolder key: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for name in key.split(separator: "/") { bytes += PathSortKey.component(String(name), isFile: false) }
        return bytes
    }

    // MARK: The database

    /// Runs `body` on the open connection, off Swift's cooperative pool. Opens (and if
    /// needed creates) the database first. A corrupt database is deleted and rebuilt;
    /// any failure returns `nil`, and the caller falls back to walking.
    ///
    /// A `quick` read (a query: a few hundred microseconds on pages the system has cached)
    /// runs on the caller's thread when the database is open and no one else is using it:
    /// two thread hand-overs cost more than the query. Anything else, and a quick read that
    /// would have to wait for a pass's transaction, runs off the cooperative pool.
    func database<T: Sendable>(quick: Bool = false,
                               _ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T) async -> T? {
        let run = { @Sendable (state: inout State) -> Result<T, SQLiteError> in
            Result { () throws(SQLiteError) -> T in
                let connection = try self.openIfNeeded(&state)
                defer { connection.resetStatements() }
                return try body(connection)
            }
        }
        let here: Result<T, SQLiteError>?? = quick
            ? state.withLockIfAvailable { state in state.connection == nil ? nil : run(&state) }
            : nil
        let outcome: Result<T, SQLiteError>?
        if let here = here ?? nil {
            outcome = here
        } else {
            outcome = try? await BlockingIO.run { _ throws(CofferError) in self.state.withLock { run(&$0) } }
        }
        switch outcome {
        case .success(let value)?:
            return value
        case .failure(let error)? where error.isCorruption:
            rebuild()
            return nil
        case .failure(let error)?:
            state.withLock { $0.statistics.lastFailure = error.description }
            return nil
        default:
            return nil
        }
    }

    /// Throws the database away and builds it again from the disk.
    public func rebuild() {
        state.withLock { state in
            state.connection = nil
            state.complete = false
            state.statistics.rebuilds += 1
            removeDatabaseFiles()
        }
        startPass(again: true)
    }

    func removeDatabaseFiles() {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(databasePath + suffix) }
    }

    func openIfNeeded(_ state: inout State) throws(SQLiteError) -> SQLiteConnection {
        if let connection = state.connection { return connection }
        let connection: SQLiteConnection
        do {
            connection = try Self.open(databasePath)
        } catch where error.isCorruption {
            removeDatabaseFiles()
            state.statistics.rebuilds += 1
            connection = try Self.open(databasePath)
        }
        let complete = try connection.statement("SELECT value FROM meta WHERE key = 'complete'")
        state.complete = try complete.step() && complete.text(0) == "1"
        state.connection = connection
        return connection
    }

    static func open(_ path: String) throws(SQLiteError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        let version = try connection.statement("PRAGMA user_version")
        let current = try version.step() ? version.int(0) : 0
        version.reset()
        if current != schemaVersion && current != 0 {
            // Another version's tables: treated like damage, so the file is started afresh.
            throw SQLiteError(code: SQLITE_NOTADB, message: "index schema \(current), expected \(schemaVersion)")
        }
        try connection.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = OFF;
            PRAGMA cache_size = -\(Self.queryCacheKiB);
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS entries(
                id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, parent TEXT NOT NULL,
                name TEXT NOT NULL, folded TEXT NOT NULL, kind INTEGER NOT NULL, sortkey BLOB NOT NULL,
                size INTEGER, modified REAL, tags TEXT);
            CREATE INDEX IF NOT EXISTS entries_parent ON entries(parent);
            CREATE INDEX IF NOT EXISTS entries_folders ON entries(path) WHERE kind = 0;
            CREATE INDEX IF NOT EXISTS entries_tagged ON entries(sortkey) WHERE tags IS NOT NULL;
            CREATE TABLE IF NOT EXISTS folders(
                path TEXT PRIMARY KEY, stamp REAL, hidden INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS folders_hidden ON folders(path) WHERE hidden = 1;
            CREATE VIRTUAL TABLE IF NOT EXISTS names
                USING fts5(folded, content = 'entries', content_rowid = 'id', tokenize = 'trigram');
            CREATE TABLE IF NOT EXISTS trigrams(term TEXT PRIMARY KEY, names INTEGER NOT NULL) WITHOUT ROWID;
            PRAGMA user_version = \(schemaVersion);
            """)
        return connection
    }
}
