public import CofferBackends
@_spi(Engine) public import CofferCore
import CofferRuntime
import CofferSearch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a container keeps the versions of its files (``SavedVersion``): the contents, one
/// file each, and an index of whose they are; and the journal of what each session changed,
/// for undoing it (``JournalChange``).
///
/// ```
/// <container>/Library/Versions/
///   files/<id>        the content, whole (on the local sandbox: the replaced file itself, renamed here)
///   index.sqlite      which file each is a version of, its date, size, type and author;
///                     each session's changes, with what reverts them
/// ```
///
/// A version is entered in the index before its content is moved in, so a process killed
/// between the two leaves an entry without content (left out of every listing, removed by
/// the next upkeep) and never content nobody can find. The index names files by virtual
/// path: it follows Coffer's moves and renames (``ItemMoveObserver``), and an entry whose
/// file went to the trash names its trash item until the file comes back or is emptied.
public final class VersionStore: ServiceFeature, ItemMoveObserver {
    /// The store's host folder.
    public let path: String
    /// When this process opened the store: an entry kept before it belongs to an earlier process.
    private let openedAt: Date
    /// The contents' host folder.
    var filesPath: String { path + "/files" }
    /// Reading and writing the contents, confined to `files/` as a mount is.
    let contents: LocalSandboxBackend
    private let index: Mutex<SQLiteConnection>
    /// The retention policy the upkeep prunes by.
    public let policy: RetentionPolicy
    /// The most the versions may take, in bytes; `nil` for the default, a tenth of the file
    /// system holding the store.
    public let sizeLimit: Int64?

    /// Opens (creating it if needed) the store at `path`.
    /// - Throws: `noPermission` when the folder cannot be made; `ioError` when the index
    ///   cannot be opened.
    public init(path: String, registry: TypeRegistry = .standard, journal: OperationJournal? = nil,
                policy: RetentionPolicy = .standard, sizeLimit: Int64? = nil) throws(CofferError) {
        self.path = path
        openedAt = Date()
        self.policy = policy
        self.sizeLimit = sizeLimit
        for folder in [path, path + "/files"] where mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw CofferError.lastSystemError("mkdir", path: nil)
        }
        contents = try LocalSandboxBackend(rootPath: path + "/files", registry: registry, journal: journal)
        do {
            let connection = try SQLiteConnection(path: path + "/index.sqlite")
            try connection.execute("""
                PRAGMA journal_mode=WAL;
                PRAGMA synchronous=NORMAL;
                CREATE TABLE IF NOT EXISTS versions(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    mount TEXT NOT NULL, path TEXT NOT NULL, trash TEXT,
                    date REAL NOT NULL, size INTEGER NOT NULL, type TEXT NOT NULL,
                    session TEXT, frontEnd TEXT, kept REAL NOT NULL);
                CREATE INDEX IF NOT EXISTS versions_path ON versions(mount, path);
                CREATE INDEX IF NOT EXISTS versions_trash ON versions(trash) WHERE trash IS NOT NULL;
                CREATE TABLE IF NOT EXISTS sessions(
                    id TEXT PRIMARY KEY, frontEnd TEXT NOT NULL, started REAL NOT NULL, undoes TEXT);
                CREATE TABLE IF NOT EXISTS changes(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, at REAL NOT NULL, kind TEXT NOT NULL,
                    mount TEXT NOT NULL, path TEXT NOT NULL, fromMount TEXT, fromPath TEXT, trashId TEXT,
                    version INTEGER, displacedTrash TEXT, tagsBefore TEXT, tagsAfter TEXT, state TEXT, undoneBy TEXT);
                CREATE INDEX IF NOT EXISTS changes_session ON changes(session, seq);
                CREATE INDEX IF NOT EXISTS changes_path ON changes(mount, path);
                CREATE INDEX IF NOT EXISTS changes_from ON changes(fromMount, fromPath) WHERE fromPath IS NOT NULL;
                """)
            // A store made before versions could be kept by a mount's own storage.
            let columns = try connection.statement("SELECT name FROM pragma_table_info('versions')")
            var known: Set<String> = []
            while try columns.step() { known.insert(columns.text(0)) }
            connection.resetStatements()
            for column in ["holder", "location"] where !known.contains(column) {
                do throws(SQLiteError) {
                    try connection.execute("ALTER TABLE versions ADD COLUMN \(column) TEXT")
                } catch where error.message.contains("duplicate column") {
                    // Another process added it meanwhile.
                }
            }
            index = Mutex(connection)
        } catch {
            throw CofferError(.ioError, detail: "versions index: \(error.message)")
        }
    }

    /// The content of version `id`, as a path of ``contents``.
    func contentPath(_ id: Int) -> VirtualPath { VirtualPath.root(of: "versions").appending(trustedName: String(id)) }

    /// The content's host path.
    func contentHostPath(_ id: Int) -> String { filesPath + "/" + String(id) }

    // MARK: The index

    /// Runs `body` on the index, off the cooperative pool.
    func withIndex<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T) async throws(CofferError) -> T {
        try await BlockingIO.run { _ throws(CofferError) -> T in
            try self.index.withLock { connection throws(CofferError) -> T in
                defer { connection.resetStatements() }
                do throws(SQLiteError) {
                    return try body(connection)
                } catch {
                    throw CofferError(.ioError, detail: "versions index: \(error.message)")
                }
            }
        }
    }

    /// Enters a version of the file `node`: before its content is moved in, or, for a
    /// version a mount's storage keeps (`held`), once it is kept there.
    func enter(_ node: FileNode, author: ChangeAuthor?, held: HeldVersion? = nil, now: Date = Date()) async throws(CofferError) -> Int {
        let mount = node.path.mount, path = node.path.relativeString
        let date = node.modificationDate.timeIntervalSince1970, size = node.size, type = node.typeIdentifier
        return try await withIndex { connection throws(SQLiteError) in
            try connection.statement("""
                INSERT INTO versions(mount, path, date, size, type, session, frontEnd, kept, holder, location)
                VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).bind(1, mount).bind(2, path).bind(3, date).bind(4, size).bind(5, type)
                .bind(6, author?.session).bind(7, author?.frontEnd).bind(8, now.timeIntervalSince1970)
                .bind(9, held?.mount).bind(10, held?.location).run()
            return Int(connection.lastInsertRowID)
        }
    }

    /// Removes version `id`: its content, then its entry. A version a mount's storage holds
    /// is deleted there (``VersionKeepingBackend/deleteVersion(_:)``); while that mount is
    /// not there, the entry stays.
    func remove(_ id: Int, in service: FileService) async throws(CofferError) {
        if let held = try await held(id) {
            try await service.holder(of: held, for: .root(of: held.mount)).deleteVersion(held.location)
            try await forget(id)
            return
        }
        let host = contentHostPath(id)
        try await BlockingIO.run { _ throws(CofferError) in
            guard unlink(host) == 0 || errno == ENOENT else { throw CofferError.lastSystemError("unlink", path: nil) }
        }
        try await withIndex { connection throws(SQLiteError) in
            try connection.statement("DELETE FROM versions WHERE id = ?").bind(1, id).run()
        }
    }

    /// Forgets the entry of version `id`, whose content is somewhere else now.
    func forget(_ id: Int) async throws(CofferError) {
        try await withIndex { connection throws(SQLiteError) in
            try connection.statement("DELETE FROM versions WHERE id = ?").bind(1, id).run()
        }
    }

    /// Where a mount's own storage holds version `id`; `nil` for one in `files/`.
    func held(_ id: Int) async throws(CofferError) -> HeldVersion? {
        try await withIndex { connection throws(SQLiteError) -> HeldVersion? in
            let row = try connection.statement("SELECT holder, location FROM versions WHERE id = ?").bind(1, id)
            guard try row.step(), let mount = row.optionalText(0), let location = row.optionalText(1) else { return nil }
            return HeldVersion(mount: mount, location: location)
        }
    }

    private static let columns = "id, mount, path, date, size, type, kept, session, frontEnd, trash, holder, location"

    private static func version(_ row: SQLiteStatement) -> (SavedVersion, trash: String?) {
        let path = VirtualPath(mount: row.text(1), trustedComponents: row.components(2))
        var version = SavedVersion(id: row.int(0), path: path, date: Date(timeIntervalSince1970: row.double(3) ?? 0),
                                   size: row.optionalInt64(4) ?? 0, typeIdentifier: row.text(5),
                                   keptAt: Date(timeIntervalSince1970: row.double(6) ?? 0),
                                   session: row.optionalText(7), frontEnd: row.optionalText(8))
        if let mount = row.optionalText(10), let location = row.optionalText(11) {
            version.held = HeldVersion(mount: mount, location: location)
        }
        return (version, row.optionalText(9))
    }

    /// The versions of the file at `path`, newest first, each as its content is now (its
    /// date and size read from the content: `touch -d` on it plants a date). Entries whose
    /// content is missing (a keep cut short) are left out, and so is a content that is the
    /// file itself (`live`, its device and inode): a keep whose replace never happened.
    func versions(of path: VirtualPath, live: (device: UInt64, inode: UInt64)? = nil) async throws(CofferError) -> [SavedVersion] {
        let mount = path.mount, relative = path.relativeString
        let entries = try await withIndex { connection throws(SQLiteError) in
            let row = try connection.statement("SELECT \(Self.columns) FROM versions WHERE mount = ? AND path = ? AND trash IS NULL")
                .bind(1, mount).bind(2, relative)
            var found: [SavedVersion] = []
            while try row.step() { found.append(Self.version(row).0) }
            return found
        }
        return try await present(entries, live: live).sorted { ($0.date, $0.id) > ($1.date, $1.id) }
    }

    /// `entries` whose content is there, with its date and size read from it; those a
    /// mount's storage holds as the index has them.
    private func present(_ entries: [SavedVersion], live: (device: UInt64, inode: UInt64)? = nil) async throws(CofferError) -> [SavedVersion] {
        let folder = filesPath
        return try await BlockingIO.run { _ throws(CofferError) in
            entries.compactMap { entry -> SavedVersion? in
                if entry.held != nil { return entry }
                var info = stat()
                guard lstat(folder + "/" + String(entry.id), &info) == 0 else { return nil }
                if let live, UInt64(info.st_dev) == live.device, UInt64(info.st_ino) == live.inode { return nil }
                var entry = entry
                entry.size = Int64(info.st_size)
                entry.date = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
                return entry
            }
        }
    }

    /// Version `id` and, when its file is in the trash, that item's ID.
    /// - Throws: `noSuchFile` when there is no such version.
    func version(_ id: Int) async throws(CofferError) -> (SavedVersion, trash: String?) {
        let found = try await withIndex { connection throws(SQLiteError) in
            let row = try connection.statement("SELECT \(Self.columns) FROM versions WHERE id = ?").bind(1, id)
            return try row.step() ? Self.version(row) : nil
        }
        guard let found, let present = try await present([found.0]).first else {
            throw CofferError(.noSuchFile, detail: "no-version")
        }
        return (present, found.trash)
    }

    /// Every version whose file is not in the trash, for pruning.
    func liveVersions() async throws(CofferError) -> [SavedVersion] {
        let entries = try await withIndex { connection throws(SQLiteError) in
            let row = try connection.statement("SELECT \(Self.columns) FROM versions WHERE trash IS NULL")
            var found: [SavedVersion] = []
            while try row.step() { found.append(Self.version(row).0) }
            return found
        }
        return try await present(entries)
    }

    /// The number of bytes the versions in `files/` take, those of trashed files included
    /// (what mounts' own storage holds takes none of the container's disk).
    func totalSize() async throws(CofferError) -> Int64 {
        try await withIndex { connection throws(SQLiteError) in
            let row = try connection.statement("SELECT COALESCE(SUM(size), 0) FROM versions WHERE location IS NULL")
            return try row.step() ? row.optionalInt64(0) ?? 0 : 0
        }
    }

    // MARK: Following the files

    /// The condition on `mount`/`path` for an item and everything below it (bound at 1–4).
    private static let below = "mount = ?1 AND (path = ?2 OR (path > ?3 AND path < ?4))"

    private static func bindBelow(_ statement: SQLiteStatement, _ item: VirtualPath) -> SQLiteStatement {
        let path = item.relativeString
        // Below `a/b`: from `a/b/` up to `a/b0` (`0` follows `/`).
        return statement.bind(1, item.mount).bind(2, path).bind(3, path + "/").bind(4, path + "0")
    }

    public func itemMoved(from source: VirtualPath, to destination: VirtualPath, in service: FileService) async {
        try? await withIndex { connection throws(SQLiteError) in
            try Self.bindBelow(connection.statement("""
                UPDATE versions SET mount = ?5, path = ?6 || substr(path, length(?2) + 1) WHERE trash IS NULL AND \(Self.below)
                """), source).bind(5, destination.mount).bind(6, destination.relativeString).run()
        }
    }

    /// The item at `path` went to the trash as `trashID`: its versions and those of what it
    /// held go with it.
    func itemTrashed(_ path: VirtualPath, as trashID: String) async {
        try? await withIndex { connection throws(SQLiteError) in
            try Self.bindBelow(connection.statement("UPDATE versions SET trash = ?5 WHERE trash IS NULL AND \(Self.below)"), path)
                .bind(5, trashID).run()
        }
    }

    /// The trashed item `trashID`, once at `original`, is back at `destination`: so are its versions.
    func itemRestored(_ trashID: String, from original: VirtualPath, to destination: VirtualPath) async {
        try? await withIndex { connection throws(SQLiteError) in
            try connection.statement("""
                UPDATE versions SET trash = NULL, mount = ?2, path = ?3 || substr(path, length(?4) + 1) WHERE trash = ?1
                """).bind(1, trashID).bind(2, destination.mount).bind(3, destination.relativeString)
                .bind(4, original.relativeString).run()
        }
    }

    /// Removes the versions of trashed items that are no longer in the trash (emptied):
    /// what emptying the trash deletes for good includes their versions.
    func removeVersions(ofTrashItemsOtherThan remaining: Set<String>, in service: FileService) async {
        guard let ids = try? await withIndex({ connection throws(SQLiteError) -> [(Int, String)] in
            let row = try connection.statement("SELECT id, trash FROM versions WHERE trash IS NOT NULL")
            var found: [(Int, String)] = []
            while try row.step() { found.append((row.int(0), row.text(1))) }
            return found
        }) else { return }
        for (id, trash) in ids where !remaining.contains(trash) { try? await remove(id, in: service) }
    }

    /// Removes the versions of the trashed item `trashID`, deleted for good.
    func removeVersions(ofTrashItem trashID: String, in service: FileService) async {
        guard let ids = try? await withIndex({ connection throws(SQLiteError) -> [Int] in
            let row = try connection.statement("SELECT id FROM versions WHERE trash = ?").bind(1, trashID)
            var found: [Int] = []
            while try row.step() { found.append(row.int(0)) }
            return found
        }) else { return }
        for id in ids { try? await remove(id, in: service) }
    }

    /// Removes the versions of `path` whose content is the live file itself (`live`, its device
    /// and inode) and that an earlier process kept: what a replace cut short by a kill left, after it linked the file in and before
    /// the new file took its place. Hidden while the file stays (``versions(of:live:)``), such a
    /// version would appear beside the one the next replace keeps, a second copy of the same content.
    func dropInterrupted(of path: VirtualPath, live: (device: UInt64, inode: UInt64)) async throws(CofferError) {
        let mount = path.mount, relative = path.relativeString, opened = openedAt.timeIntervalSince1970
        let ids = try await withIndex { connection throws(SQLiteError) -> [Int] in
            // Only an earlier process's (one killed): a replace of this process may be placing its file.
            let row = try connection.statement("SELECT id FROM versions WHERE mount = ? AND path = ? AND holder IS NULL AND kept < ?")
                .bind(1, mount).bind(2, relative).bind(3, opened)
            var found: [Int] = []
            while try row.step() { found.append(row.int(0)) }
            return found
        }
        guard !ids.isEmpty else { return }
        let folder = filesPath
        let interrupted = try await BlockingIO.run { _ throws(CofferError) -> [Int] in
            ids.filter { id in
                var info = stat()
                guard lstat(folder + "/" + String(id), &info) == 0 else { return false }
                return UInt64(info.st_dev) == live.device && UInt64(info.st_ino) == live.inode && unlink(folder + "/" + String(id)) == 0
            }
        }
        for id in interrupted { try await forget(id) }
    }

    /// Removes entries whose content never arrived: a keep cut short (by a kill) more than an
    /// hour ago, before its content was moved in.
    func removeStrays(now: Date = Date()) async {
        let cutoff = now.addingTimeInterval(-3600).timeIntervalSince1970
        guard let entries = try? await withIndex({ connection throws(SQLiteError) -> [(Int, Double)] in
            let row = try connection.statement("SELECT id, kept FROM versions WHERE location IS NULL")
            var found: [(Int, Double)] = []
            while try row.step() { found.append((row.int(0), row.double(1) ?? 0)) }
            return found
        }) else { return }
        let folder = filesPath
        let missing = (try? await BlockingIO.run { _ throws(CofferError) in
            entries.filter { id, kept in kept < cutoff && access(folder + "/" + String(id), F_OK) != 0 && errno == ENOENT }.map(\.0)
        }) ?? []
        for id in missing { try? await forget(id) }
    }

    // MARK: Upkeep

    /// Prunes by the store's policy at the start and every hour, and removes strays.
    public func keepUp(_ service: FileService) async {
        while !Task.isCancelled {
            await removeStrays()
            _ = try? await service.pruneVersions(policy: policy, sizeLimit: sizeLimit, below: nil, dryRun: false)
            try? await Task.sleep(for: .seconds(3600))
        }
    }
}
