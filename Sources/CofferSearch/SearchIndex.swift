import CSQLite
import CofferRuntime
public import CofferCore
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
    static let schemaVersion = 4
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
        /// Whether the rows' sizes, times and tags are known to be current: every folder has
        /// been read again since the live watch started and no event was lost since. Only then
        /// are the search filters answered from the rows; otherwise matches are read from storage.
        var factsCurrent = false
        /// Reading every folder again in the background (``refreshFacts()``).
        var factsRefresh: Task<Void, Never>?
        /// Counts the times the facts fell behind (the watch started, events were lost): a
        /// refresh makes them current only if none happened while it ran.
        var factsFellBehind = 0
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
    /// Whether the rows' sizes, times and tags answer the search filters (``State/factsCurrent``).
    public var factsAreCurrent: Bool { state.withLock { $0.factsCurrent && $0.watch != nil } }
    public var statistics: Statistics { state.withLock { $0.statistics } }

    // MARK: Lifecycle

    /// Opens the index and brings it up to date in the background; with `watching`, also
    /// watches the mount (when its backend can) and applies changes as they happen.
    public func start(watching: Bool) async {
        _ = await database { _ throws(SQLiteError) in () }
        if watching, let watchable = backend as? any WatchableBackend, !isLive {
            let (stream, continuation) = AsyncStream.makeStream(of: [FileChange].self)
            // An item that came and went is still reported: a pass may have read it in between.
            if let watch = try? await watchable.watch(.root(of: mount), recursive: true, reportingPassing: true,
                                                      handler: { continuation.yield($0) }) {
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
        if isLive { refreshFacts() }
    }

    /// Stops the live watch and any pass in progress.
    public func stop() {
        let (watch, consumer, pass, refresh) = state.withLock { state in
            defer {
                state.watch = nil; state.watchConsumer = nil; state.pass = nil
                state.factsCurrent = false; state.factsRefresh = nil
            }
            return (state.watch, state.watchConsumer, state.pass, state.factsRefresh)
        }
        watch?.cancel()
        consumer?.cancel()
        pass?.cancel()
        refresh?.cancel()
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

    /// Reads every folder again in the background, after the pass in progress, so that the
    /// rows' sizes, times and tags are current from then on (a file changed in place moves no
    /// folder's time, so a pass cannot see it; the watch sees it once it runs). Searches do not
    /// wait for it: until it ends, their filters are judged on what storage answers.
    func refreshFacts() {
        state.withLock { state in
            state.factsCurrent = false
            state.factsFellBehind += 1
            guard state.factsRefresh == nil else { return }
            state.factsRefresh = Task { [self] in
                while !Task.isCancelled {
                    let behind = self.state.withLock { $0.factsFellBehind }
                    await waitForPass()
                    await writer.acquire()
                    let plan = await passPlan(full: true)
                    await writer.release()
                    let scanned = if let plan { await scan(plan) } else { false }
                    let done = self.state.withLock { state in
                        guard state.factsFellBehind == behind || !scanned else { return false }
                        if scanned && state.watch != nil { state.factsCurrent = true }
                        state.factsRefresh = nil
                        return true
                    }
                    if done { return }
                }
            }
        }
    }

    /// Waits for a refresh of the rows' facts in progress, if any.
    public func waitForFacts() async {
        await state.withLock { $0.factsRefresh }?.value
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
    func reread(_ paths: [VirtualPath]) async {
        await writer.acquire()
        let nodes = await backend.nodes(at: paths)
        var tags: [[String]] = []
        for (path, node) in zip(paths, nodes) {
            let tagging = node.flatMap { $0.isHidden ? nil : backend as? any TaggingBackend }
            tags.append((try? await tagging?.tags(at: path)) ?? [])
        }
        let registry = registry
        let folders = await database { [tags] connection throws(SQLiteError) -> [String] in
            try connection.transaction { () throws(SQLiteError) -> [String] in
                var folders: [String] = []
                for ((path, node), tags) in zip(zip(paths, nodes), tags) {
                    let key = Self.key(path), parentKey = Self.key(path.parent ?? .root(of: self.mount))
                    try Self.deleteTree(key, in: connection)
                    let parentIndexed = try connection.statement("SELECT 1 FROM folders WHERE path = ?1")
                        .bind(1, parentKey).step()
                    guard parentIndexed, let node, !node.isHidden else { continue }
                    let item = IndexedItem(node, tags: tags)
                    let kind = item.kind
                    try Self.insert(item, parentKey: parentKey, parentSortKey: Self.sortKey(ofFolder: parentKey), in: connection)
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
            // Many changes at once (or lost events): comparing folder times is cheaper; files
            // changed in place are seen only when every folder is read again.
            await reconcile()
            refreshFacts()
        } else {
            var seen = Set<VirtualPath>()
            await update(changes.map(\.path).filter { seen.insert($0).inserted })
        }
    }
}
