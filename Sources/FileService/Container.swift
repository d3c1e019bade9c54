public import CofferBackends
public import CofferCore
import CofferRuntime
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The folder that holds everything Coffer keeps for an application.
///
/// ```
/// <container>/
///   Documents/UserFiles/          files:   (Download/, Import/ created on first launch)
///   Documents/ExportTemp/         staging:  (never shown; stages older than 24 h removed at open)
///   Library/Application Support/AppData/
///   Library/Caches/{SearchIndex,Thumbnails,Downloading,Remote}/   (CACHEDIR.TAG)
///   Library/Trash/                trash:    (freedesktop.org layout: files/, info/)
///   Library/Versions/             the versions of files (files/, index.sqlite)
///   tmp/                          (CACHEDIR.TAG; entries older than 24 h removed at open)
/// ```
public struct Container: Sendable {
    /// The container's host folder. Front ends never show it.
    public let hostPath: String
    /// What this process has under way here, for the recovery of the next start.
    public let journal: OperationJournal
    /// What this opening's recovery settled after processes that were killed.
    public private(set) var recovery = OperationJournal.Recovery()

    /// Folders every container has, relative to its root.
    public static let layout = [
        "Documents", "Documents/UserFiles", "Documents/ExportTemp",
        "Library", "Library/Application Support", "Library/Application Support/AppData",
        "Library/Caches", "Library/Caches/SearchIndex", "Library/Caches/Thumbnails", "Library/Caches/Downloading",
        "Library/Caches/Remote", "Library/Trash", "Library/Versions", "tmp",
    ]
    /// Where the journals are, relative to the root (made on the first change).
    static let journalFolder = "Library/Application Support/AppData/Journal"
    /// Folders marked as rebuildable for backup tools.
    public static let cacheFolders = [
        "Library/Caches/SearchIndex", "Library/Caches/Thumbnails", "Library/Caches/Downloading", "Library/Caches/Remote", "tmp",
    ]
    /// Folders created inside `files:` on first launch.
    public static let userFolders = ["Download", "Import"]
    /// How long an entry may stay in `tmp/`.
    public static let temporaryLifetime: TimeInterval = 24 * 60 * 60

    /// The user's files: the root of the `files:` mount.
    public var userFilesPath: String { hostPath + "/Documents/UserFiles" }
    /// Where exports are staged: the root of the hidden `staging:` mount.
    public var exportStagingPath: String { hostPath + "/Documents/ExportTemp" }
    /// The application's private data (bookmarks, favourites, shares, the audit log,
    /// history): kept, backed up, never shown.
    public var appDataPath: String { hostPath + "/Library/Application Support/AppData" }
    /// The folder of every cache: rebuildable, marked so for backup tools.
    public var cachesPath: String { hostPath + "/Library/Caches" }
    /// The search index of `files:` (rebuildable).
    public var searchIndexPath: String { hostPath + "/Library/Caches/SearchIndex" }
    /// The search index's database (SQLite, with its `-wal` and `-shm` beside it).
    public var searchIndexDatabasePath: String { searchIndexPath + "/index.sqlite" }
    /// The trash, in freedesktop.org layout: the root of the read-only `trash:` mount.
    public var trashPath: String { hostPath + "/Library/Trash" }
    /// The versions of files: what saves and replaces displaced (``VersionStore``).
    public var versionsPath: String { hostPath + "/Library/Versions" }
    /// Uploads in progress (RPC `files/upload/*`): partial transfers, rebuildable.
    public var uploadsPath: String { hostPath + "/Library/Caches/Downloading" }
    /// Short-lived files (editors' drafts among them); entries older than 24 hours are
    /// removed when the container is opened.
    public var temporaryPath: String { hostPath + "/tmp" }
    /// Contents of remote files (S3 mounts), kept to be read again without the network.
    public var remoteCachePath: String { hostPath + "/Library/Caches/Remote" }
    /// Thumbnails, laid out as the freedesktop.org Thumbnail Managing Standard says.
    public var thumbnailsPath: String { hostPath + "/Library/Caches/Thumbnails" }
    /// The journals of processes using the container (`OperationJournal`).
    public var journalPath: String { journal.folderPath }

    // The files the container holds for the application, one accessor each, so that no
    // caller spells a path inside the container. (The service still finds the favourites
    // and shares beside the bookmarks; the accessors say where that is.)

    /// Bookmarks of host files opened in place (``OpenHostFile``).
    public var bookmarksPath: String { appDataPath + "/bookmarks.json" }
    /// The user's favourites.
    public var favouritesPath: String { appDataPath + "/favourites.json" }
    /// Share links (mode 0600: they hold password hashes).
    public var sharesPath: String { appDataPath + "/shares.json" }
    /// Network transfers remembered between processes (one record each).
    public var transfersPath: String { appDataPath + "/Transfers" }
    /// The audit log of operations that changed something (JSON lines).
    public var auditLogPath: String { appDataPath + "/logs/audit.jsonl" }
    /// The REPL's line history.
    public var historyPath: String { appDataPath + "/history" }
    /// The secret of `coffer serve` (the web page).
    public var webTokenPath: String { appDataPath + "/web-token" }
    /// WebDAV clients' locks, kept while `coffer serve` restarts.
    public var davLocksPath: String { appDataPath + "/dav-locks.json" }
    /// Finder's `.DS_Store` and `._` files written over WebDAV, kept apart from the user's files.
    public var davAppleFilesPath: String { appDataPath + "/dav-apple" }
    /// The secret of `coffer mcp --http`.
    public var mcpTokenPath: String { appDataPath + "/mcp-token" }
    /// The S3 mounts' ledger of multipart uploads under way, to finish or abort after a crash.
    public var s3LedgerPath: String { appDataPath + "/S3Uploads" }

    init(hostPath: String) {
        self.hostPath = hostPath
        journal = OperationJournal(folderPath: hostPath + "/" + Self.journalFolder)
    }

    /// The container holding the host path `path`, if it is inside one (`…/Documents/…` of a
    /// folder laid out as a container): the desktop's recent files are shared by containers,
    /// and one must not show another's.
    public static func enclosing(_ path: String) -> String? {
        var search = path.startIndex
        while let found = path.range(of: "/Documents/", range: search..<path.endIndex) {
            let root = String(path[..<found.lowerBound])
            var isFolder: ObjCBool = false
            if !root.isEmpty, FileManager.default.fileExists(atPath: root + "/Library/Application Support/AppData", isDirectory: &isFolder),
               isFolder.boolValue, FileManager.default.fileExists(atPath: root + "/Documents/UserFiles") {
                return root
            }
            search = found.upperBound
        }
        return nil
    }

    /// `$XDG_DATA_HOME/<application>`, else `~/.local/share/<application>` (`coffer` by default).
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment,
                                       application: String = "coffer") -> String {
        BaseDirectories(environment: environment).dataHome + "/" + application
    }

    /// Opens the container at `hostPath`, creating and repairing its layout.
    ///
    /// Missing folders are created; a part of the layout that exists but is not a folder
    /// (a file, or a link) is reported as `damagedContainer` naming the part relative to the
    /// container, never the host path. Entries in `tmp/` older than 24 hours are removed,
    /// and so are export stages (`Documents/ExportTemp`) that old, and uploads in
    /// `Library/Caches/Downloading` abandoned for an hour. What processes that were killed
    /// left under way is settled (`OperationJournal`'s `recover(folderPath:)`): their
    /// partials removed wherever they made them, their trash entries made whole; ``recovery``
    /// says what was.
    ///
    /// - Parameters:
    ///   - hostPath: The container's folder; made, with its parents, when missing.
    ///   - now: The time entries' ages are measured from.
    /// - Throws: `damagedContainer` for a part of the layout that is not a folder;
    ///   `noPermission` for a folder that cannot be made or searched; `outOfSpace` when the
    ///   disk is full; `ioError` when a cache folder cannot be marked.
    public static func open(at hostPath: String, now: Date = Date()) async throws(CofferError) -> Container {
        let root = hostPath.count > 1 && hostPath.hasSuffix("/") ? String(hostPath.dropLast()) : hostPath
        try makeFolder(root, part: ".", withParents: true)
        for part in layout { try makeFolder(root + "/" + part, part: part, withParents: false) }
        for part in userFolders {
            try makeFolder(root + "/Documents/UserFiles/" + part, part: "Documents/UserFiles/" + part, withParents: false)
        }
        for part in cacheFolders {
            do { try CacheDirectoryTag.ensure(inFolderAt: root + "/" + part) } catch {
                throw CofferError(.ioError, detail: part, underlying: CofferError.wrapping(error))
            }
        }
        var container = Container(hostPath: root)
        // The trash's own folders first, while the journals of dead processes are still there
        // to tell them: no partial there may outlast its process (issue 39).
        var orphans = 0
        for part in ["info", "files"] {
            orphans += OperationJournal.removeOrphanPartials(inFolderAt: container.trashPath + "/" + part,
                                                             journalFolder: container.journalPath, now: now)
        }
        container.recovery = OperationJournal.recover(folderPath: container.journalPath)
        container.recovery.partials += orphans
        try await container.removeExpiredEntries(inFolderAt: container.temporaryPath, now: now,
                                           keeping: [CacheDirectoryTag.fileName])
        try await container.removeExpiredEntries(inFolderAt: container.exportStagingPath, now: now, keeping: [])
        // Uploads that a crash interrupted: they expire after an hour without data anyway.
        // (Their partials are the journal's, removed above at once; what is left is data a
        // commit was copying to its destination when it was cut short.)
        let uploads = try LocalSandboxBackend(rootPath: container.uploadsPath, syncBeforeCommit: false)
        let idle = now.addingTimeInterval(-FileService.uploadIdleLimit)
        _ = try? await uploads.removeAbandonedPartials(in: .root(of: "uploads"), olderThan: idle)
        let left = (try? await uploads.contentsOfFolder(at: .root(of: "uploads"))) ?? []
        var kept = Set<String>()
        for node in left where node.name.hasPrefix(UploadRegistry.temporaryPrefix) {
            if node.modificationDate < idle { try? await uploads.removeItem(at: node.path) } else { kept.insert(node.name) }
        }
        // A resumable upload's record goes with its data.
        for node in left where node.name.hasPrefix(UploadRegistry.recordPrefix) {
            let record = FileManager.default.contents(atPath: container.uploadsPath + "/" + node.name)
                .flatMap { try? JSONDecoder().decode(UploadRegistry.ResumeRecord.self, from: $0) }
            if !node.name.hasSuffix(".json") || record.map({ !kept.contains($0.data) }) ?? true {
                try? await uploads.removeItem(at: node.path)
            }
        }
        return container
    }

    private static func makeFolder(_ path: String, part: String, withParents: Bool) throws(CofferError) {
        do {
            try makeFolderOrFail(path, part: part, withParents: withParents)
        } catch {
            // What the user knows as `files:` is named so; the rest by its place in the container.
            let faulty = error.detail ?? part
            guard error.kind != .damagedContainer, faulty == "Documents/UserFiles" || faulty.hasPrefix("Documents/UserFiles/") else { throw error }
            let inside = faulty.dropFirst("Documents/UserFiles".count).split(separator: "/").map(String.init)
            throw error.naming(inside.reduce(VirtualPath.root()) { $0.appending(trustedName: $1) })
        }
    }

    private static func makeFolderOrFail(_ path: String, part: String, withParents: Bool) throws(CofferError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw CofferError(.damagedContainer, detail: part) }
            return
        }
        // The folder it is in cannot be searched: that folder is what to name.
        if errno == EACCES, !withParents, let slash = part.lastIndex(of: "/") {
            throw CofferError(.noPermission, detail: String(part[..<slash]), errno: EACCES)
        }
        if withParents {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw CofferError(.noPermission, detail: part, underlying: CofferError.wrapping(error))
            }
            return
        }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            let code = errno
            throw CofferError(code == ENOSPC ? .outOfSpace : .noPermission, detail: part, errno: code)
        }
    }

    /// Removes entries of a folder whose modification time is older than the lifetime.
    func removeExpiredEntries(inFolderAt path: String, now: Date, keeping: Set<String>) async throws(CofferError) {
        let backend = try LocalSandboxBackend(rootPath: path, syncBeforeCommit: false)
        let cutoff = now.addingTimeInterval(-Self.temporaryLifetime)
        do {
            for node in try await backend.contentsOfFolder(at: .root(of: "tmp"))
            where node.modificationDate < cutoff && !keeping.contains(node.name) {
                try await backend.removeItem(at: node.path)
            }
        } catch {
            throw CofferError.wrapping(error)
        }
    }
}

