import CSQLite
import CofferRuntime
import CofferCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A name index of one mount, in SQLite, that searches can ask instead of walking.
///
/// Each visible item below the mount's root is a row: its path, its folded name, what it
/// is, and a sort key that puts rows in the order a walk visits them. An FTS5 table with
/// the trigram tokenizer over the folded names answers substring queries of three
/// characters or more; shorter ones scan the rows with `LIKE`. The FTS table is filled in
/// one go when the first build completes and kept in step by triggers after that. Hidden items, and
/// everything inside hidden folders and packages, are left out, as a walk leaves them out.
///
/// The index is a cache of what is on disk, and keeps itself honest:
/// - **Operations**: ``update(_:)`` rereads the paths an operation touched (a moved item's
///   old and new place, a copied folder's whole tree) before the operation returns.
/// - **Outside changes**: a pass compares every indexed folder's modification time with
///   the one recorded when it was read and rescans only the folders that differ. A pass
///   from nothing is the first build; it commits folder by folder, so a build cut short
///   resumes where it stopped. While a live watch runs (``start(watching:)``) its events
///   are applied as they come; without one, each search first runs a pass.
/// - **Damage**: a deleted database is recreated; a corrupt one is deleted and rebuilt.
///   Neither is ever an error a user sees: until the index is complete, searches walk.
public final class SearchIndex: Sendable {
    /// The mount the index covers.
    public let mount: String
    let backend: any StorageBackend
    let registry: TypeRegistry
    /// The database file (with `-wal` and `-shm` beside it).
    public let databasePath: String

    /// Bumped when the tables change; an index of another version is rebuilt.
    static let schemaVersion = 3
    /// Folders read together, and written in one transaction, in a scan.
    static let batchSize = 64
    /// A folder modified this close to its reading gets no stamp: file systems keep
    /// times in coarse ticks, so a change in the same tick would go unseen.
    static let racyInterval: TimeInterval = 1

    struct State {
        var connection: SQLiteConnection?
        /// A pass over the whole mount has finished at least once.
        var complete = false
        var pass: Task<Void, Never>?
        /// Run one more pass when the current one ends.
        var passAgain = false
        var watch: (any ChangeWatch)?
        var watchConsumer: Task<Void, Never>?
        /// Passes run and rows written, for tests and benchmarks.
        var statistics = Statistics()
        /// Batches a pass may still commit before it stops as if cut short (`nil`: no limit):
        /// how tests interrupt a build at a known point.
        var batchesLeft: Int?
    }

    /// Lets the next passes commit `count` batches of folders between them and then stop, as a
    /// process killed in the middle of a build would; `nil` lifts the limit.
    public func limitBatches(to count: Int?) { state.withLock { $0.batchesLeft = count } }

    /// What the index has done since it was opened.
    public struct Statistics: Sendable, Equatable {
        public var passes = 0
        public var foldersScanned = 0
        public var rebuilds = 0
        /// The last database failure that made a search walk instead, for diagnosis.
        public var lastFailure: String?
    }

    let state = Mutex(State())
    let writer = AsyncLock()

    public init(databasePath: String, mount: String, backend: any StorageBackend, registry: TypeRegistry = .standard) {
        self.databasePath = databasePath
        self.mount = mount
        self.backend = backend
        self.registry = registry
    }

    /// Whether a pass over the whole mount has finished, so queries can be answered.
    public var isComplete: Bool { state.withLock { $0.complete } }
    /// Whether a live watch keeps the index current.
    public var isLive: Bool { state.withLock { $0.watch != nil } }
    public var statistics: Statistics { state.withLock { $0.statistics } }

    // MARK: Lifecycle

    /// Opens the index and brings it up to date in the background; with `watching`, also
    /// watches the mount (when its backend can) and applies changes as they happen.
    public func start(watching: Bool) async {
        _ = await database { _ throws(SQLiteError) in () }
        if watching, let watchable = backend as? any WatchableBackend, !isLive {
            let (stream, continuation) = AsyncStream.makeStream(of: [FileChange].self)
            if let watch = try? await watchable.watch(.root(of: mount), recursive: true, handler: { continuation.yield($0) }) {
                let consumer = Task { [weak self] in
                    for await changes in stream { await self?.apply(changes) }
                }
                state.withLock {
                    $0.watch = watch
                    $0.watchConsumer = consumer
                }
            }
        }
        startPass()
    }

    /// Stops the live watch and any pass in progress.
    public func stop() {
        let (watch, consumer, pass) = state.withLock { state in
            defer { state.watch = nil; state.watchConsumer = nil; state.pass = nil }
            return (state.watch, state.watchConsumer, state.pass)
        }
        watch?.cancel()
        consumer?.cancel()
        pass?.cancel()
    }

    /// Stops like ``stop()`` and closes the database, which folds its write-ahead log back
    /// into the file. The next use opens it again.
    public func close() {
        stop()
        state.withLock { $0.connection = nil }
    }

    /// Waits for the pass in progress, if any.
    public func waitForPass() async {
        await state.withLock { $0.pass }?.value
    }

    /// Brings the index up to date with the disk now and waits for it.
    public func reconcile() async {
        startPass()
        await waitForPass()
    }

    /// How many items and folders the index holds; `nil` when the database cannot be read.
    public func counts() async -> (items: Int, folders: Int)? {
        await database { connection throws(SQLiteError) in
            let items = try connection.statement("SELECT count(*) FROM entries")
            let folders = try connection.statement("SELECT count(*) FROM folders")
            _ = try items.step()
            _ = try folders.step()
            return (items.int(0), folders.int(0))
        }
    }

    /// Starts a pass unless one is running.
    /// With `again`, a pass already running is followed by another (after a rebuild, say,
    /// which the running pass started before).
    func startPass(again: Bool = false) {
        state.withLock { state in
            guard state.pass == nil else {
                if again { state.passAgain = true }
                return
            }
            state.pass = Task { [self] in
                while true {
                    await runPass()
                    let done = self.state.withLock { state in
                        let done = !state.passAgain || Task.isCancelled
                        if done { state.pass = nil }
                        state.passAgain = false
                        return done
                    }
                    if done { break }
                }
            }
        }
    }

    // MARK: Keeping current

    /// Rereads `paths` after an operation changed them: each that exists and is visible
    /// is (re)indexed with everything below it, each that is gone is dropped.
    public func update(_ paths: [VirtualPath]) async {
        let covered = paths.filter { $0.mount == mount && !$0.isRoot }
        // No database yet: nothing to correct, the first build will read everything.
        guard !covered.isEmpty, state.withLock({ $0.connection != nil }) || access(databasePath, F_OK) == 0 else { return }
        // A hidden list that changed changes what is visible beside it: its folder's rows
        // are made to match a new listing (the hidden list itself is never a row).
        let lists = Set(covered.filter { $0.name == FolderEntry.hiddenListName }.compactMap(\.parent).map(Self.key))
        let items = covered.filter { $0.name != FolderEntry.hiddenListName }
        if !items.isEmpty { await reread(items) }
        if !lists.isEmpty { _ = await scan(lists.sorted()) }
    }

    /// Reindexes each of `paths` (and what is below it) as it is now, or drops it.
    private func reread(_ paths: [VirtualPath]) async {
        await writer.acquire()
        let nodes = await backend.nodes(at: paths)
        let registry = registry
        let folders = await database { connection throws(SQLiteError) -> [String] in
            try connection.transaction { () throws(SQLiteError) -> [String] in
                var folders: [String] = []
                for (path, node) in zip(paths, nodes) {
                    let key = Self.key(path), parentKey = Self.key(path.parent ?? .root(of: self.mount))
                    try Self.deleteTree(key, in: connection)
                    let parentIndexed = try connection.statement("SELECT 1 FROM folders WHERE path = ?1")
                        .bind(1, parentKey).step()
                    guard parentIndexed, let node, !node.isHidden else { continue }
                    let kind = FolderEntry.Kind(of: node)
                    try Self.insert(name: path.name, kind: kind, parentKey: parentKey,
                                    parentSortKey: Self.sortKey(ofFolder: parentKey), in: connection)
                    // The folder's stamp no longer describes what the index holds.
                    try connection.statement("UPDATE folders SET stamp = NULL WHERE path = ?1").bind(1, parentKey).run()
                    if kind == .folder && !registry.isPackage(folderNamed: path.name) { folders.append(key) }
                }
                return folders
            }
        }
        await writer.release()
        // New folders are read with everything in them.
        if let folders, !folders.isEmpty { _ = await scan(folders) }
    }

    /// Applies a batch of changes a watch reported.
    func apply(_ changes: [FileChange]) async {
        if changes.count > 256 || changes.contains(where: { $0.path.isRoot }) {
            // Many changes at once (or lost events): comparing folder times is cheaper.
            await reconcile()
        } else {
            var seen = Set<VirtualPath>()
            await update(changes.map(\.path).filter { seen.insert($0).inserted })
        }
    }

    // MARK: Passes

    /// Compares every indexed folder's modification time with its recorded stamp and
    /// rescans those that differ, that have no stamp, or that were never read (a build cut
    /// short); drops folders that are gone. From an empty database this is the first build.
    /// Marks the index complete when it gets through.
    func runPass() async {
        await writer.acquire()
        let plan = await passPlan()
        await writer.release()
        guard let plan, await scan(plan) else { return }
        let marked: Void? = await database { [complete = isComplete] connection throws(SQLiteError) in
            if !complete { return try Self.markComplete(connection) }
            // An index completed by an earlier version has no counts yet.
            if try !connection.statement("SELECT 1 FROM trigrams LIMIT 1").step() { try Self.countTrigrams(connection) }
        }
        state.withLock { state in
            if marked != nil { state.complete = true }
            state.statistics.passes += 1
        }
    }

    /// Records that the index is complete. The first time, the name index is built in one
    /// go from the rows (much faster than row by row during the build, when nothing
    /// queries it) and triggers then keep it in step with every later change.
    private static func markComplete(_ connection: SQLiteConnection) throws(SQLiteError) {
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
    private static func countTrigrams(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("""
            CREATE VIRTUAL TABLE IF NOT EXISTS temp.names_vocabulary USING fts5vocab(main, names, 'row');
            DELETE FROM trigrams;
            INSERT INTO trigrams(term, names) SELECT term, doc FROM temp.names_vocabulary;
            """)
    }

    /// The folders a pass must read, with those that are gone already dropped.
    private func passPlan() async -> [String]? {
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
            if stamp != date.timeIntervalSinceReferenceDate { changed.append(key) }
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
            let listings = await backend.entries(inFoldersAt: batch.map(path(forKey:)))
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

    /// Makes the rows of a folder's children match `entries`, and records its stamp;
    /// returns its subfolders that have never been read.
    private static func write(_ entries: [FolderEntry], ofFolder key: String, stamp: Double?, registry: TypeRegistry,
                              in connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        var recorded: [String: Int] = [:]
        let existing = try connection.statement("SELECT name, kind FROM entries WHERE parent = ?1").bind(1, key)
        while try existing.step() { recorded[existing.text(0)] = existing.int(1) }
        var visible: [String: FolderEntry.Kind] = [:]
        for entry in entries where !entry.isHidden { visible[entry.name] = entry.kind }
        for (name, kind) in recorded where visible[name].map(Self.code) != kind {
            try deleteTree(child(name, of: key), in: connection)
        }
        let folderKey = sortKey(ofFolder: key)
        var subfolders: [String] = []
        for (name, kind) in visible {
            if recorded[name] != code(kind) {
                try insert(name: name, kind: kind, parentKey: key, parentSortKey: folderKey, in: connection)
            }
            guard kind == .folder && !registry.isPackage(folderNamed: name) else { continue }
            let childKey = child(name, of: key)
            if try !connection.statement("SELECT 1 FROM folders WHERE path = ?1").bind(1, childKey).step() {
                subfolders.append(childKey)
            }
        }
        let hasHiddenList = entries.contains { $0.name == FolderEntry.hiddenListName }
        try connection.statement("INSERT OR REPLACE INTO folders(path, stamp, hidden) VALUES (?1, ?2, ?3)")
            .bind(1, key).bind(2, stamp).bind(3, hasHiddenList ? 1 : 0).run()
        return subfolders
    }

    private static func insert(name: String, kind: FolderEntry.Kind, parentKey: String, parentSortKey: [UInt8],
                               in connection: SQLiteConnection) throws(SQLiteError) {
        try connection.statement(
            "INSERT INTO entries(path, parent, name, folded, kind, sortkey) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .bind(1, child(name, of: parentKey)).bind(2, parentKey).bind(3, name)
            .bind(4, NamePattern.fold(name)).bind(5, code(kind))
            .bind(6, parentSortKey + PathSortKey.component(name, isFile: kind != .folder))
            .run()
    }

    /// Drops the row at `key`, everything below it, and the folders' stamps.
    private static func deleteTree(_ key: String, in connection: SQLiteConnection) throws(SQLiteError) {
        for table in ["entries", "folders"] {
            try connection.statement("DELETE FROM \(table) WHERE path = ?1 OR (path >= ?2 AND path < ?3)")
                .bind(1, key).bind(2, key + "/").bind(3, key + "0").run()
        }
    }

    private static func code(_ kind: FolderEntry.Kind) -> Int {
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

    private func removeDatabaseFiles() {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(databasePath + suffix) }
    }

    private func openIfNeeded(_ state: inout State) throws(SQLiteError) -> SQLiteConnection {
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

    private static func open(_ path: String) throws(SQLiteError) -> SQLiteConnection {
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
            PRAGMA cache_size = -16000;
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS entries(
                id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, parent TEXT NOT NULL,
                name TEXT NOT NULL, folded TEXT NOT NULL, kind INTEGER NOT NULL, sortkey BLOB NOT NULL);
            CREATE INDEX IF NOT EXISTS entries_parent ON entries(parent);
            CREATE INDEX IF NOT EXISTS entries_folders ON entries(path) WHERE kind = 0;
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
