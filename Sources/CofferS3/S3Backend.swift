public import CofferCore
import CofferRuntime
import Foundation
import Synchronization

/// A bucket (or a prefix in one) as a mount, laid out as S3 tools show it: a key's names
/// are folders and a file (`Projects/2026/plan.txt`); a folder with nothing in it is a
/// zero-byte `name/` marker object, as the S3 consoles, rclone and s3fs make them.
///
/// Every call is a network round trip made off the cooperative pool. A listing is one
/// `ListObjectsV2` request per 1,000 entries and none per object. Writes are spooled to a
/// local file and put whole at commit, so nothing is visible before; a commit that must not
/// replace carries `If-None-Match: *`, a replace carries `If-Match` with the ETag seen just
/// before, so two writers never silently lose an update. Moves are copies then deletes: a
/// folder moved is not moved at once, so the backend does not claim `atomicMove`.
public final class S3Backend: StorageBackend {
    public let capabilities: BackendCapabilities = [.writable]
    let client: S3Client
    let spoolFolder: String
    let registry: TypeRegistry
    let transfers: S3Transfers
    /// The uploads in parts under way, for the clean-up after a kill (`nil`: none kept).
    let ledger: S3UploadLedger?
    /// Contents of files read through, kept locally (`nil`: none kept).
    let cache: S3ContentCache?
    let swept = Atomic<Bool>(false)
    /// Keys shown under a safe name, and the key each such name stands for.
    let names = S3Names()

    /// - Parameters:
    ///   - spoolFolder: a local folder for writes waiting to be committed (the container's
    ///     `tmp/`); it must exist.
    ///   - ledgerFolder: where the uploads in parts under way are noted, so that those of a
    ///     killed process are dropped later (the container's `AppData/S3Uploads`).
    ///   - cacheFolder: where contents of files read through are kept (the container's
    ///     `Library/Caches/Remote`), up to ``S3Transfers/cacheLimit``.
    public convenience init(configuration: S3Configuration, spoolFolder: String, ledgerFolder: String? = nil,
                            cacheFolder: String? = nil, transfers: S3Transfers = S3Transfers(),
                            registry: TypeRegistry = .standard) {
        self.init(client: S3Client(configuration), spoolFolder: spoolFolder, ledgerFolder: ledgerFolder,
                  cacheFolder: cacheFolder, transfers: transfers, registry: registry)
    }

    init(client: S3Client, spoolFolder: String, ledgerFolder: String? = nil, cacheFolder: String? = nil,
         transfers: S3Transfers = S3Transfers(), registry: TypeRegistry = .standard) {
        self.client = client
        self.spoolFolder = spoolFolder
        self.transfers = transfers
        self.registry = registry
        self.ledger = ledgerFolder.map {
            S3UploadLedger(folder: $0, endpoint: client.configuration.endpoint, bucket: client.configuration.location.bucket)
        }
        self.cache = cacheFolder.map {
            S3ContentCache(folder: $0, limit: transfers.cacheLimit, endpoint: client.configuration.endpoint,
                           bucket: client.configuration.location.bucket)
        }
    }

    // MARK: Keys

    var prefix: String { client.configuration.location.prefix }

    /// The key of the file at `path`: its names, each the key's own name when it was shown
    /// escaped (``S3Names``).
    func key(_ path: VirtualPath) -> String {
        var key = prefix
        for (index, name) in path.components.enumerated() {
            if index > 0 { key += "/" }
            key += names.raw(name, in: index == 0 ? prefix : key)
        }
        return key
    }

    /// The prefix of what the folder at `path` holds (its marker's key too).
    func folderKey(_ path: VirtualPath) -> String { path.isRoot ? prefix : key(path) + "/" }

    // MARK: Reading

    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.listFolder(path) }
    }

    func listFolder(_ path: VirtualPath) throws(CofferError) -> [FileNode] {
        var listing = FolderListing(path, in: self)
        var nodes: [FileNode] = []
        repeat {
            nodes += listing.nodes(of: try client.list(prefix: listing.folder, continuation: listing.continuation))
        } while !listing.ended
        if !listing.sawAnything && !path.isRoot { throw CofferError(.noSuchFile, path: path) }
        return nodes
    }

    /// A folder's listing as its pages arrive: the items of each, the names of files met so far
    /// (a folder of the same name as a file is not shown; a key sorts before the keys under it,
    /// so the file comes first) and where the next page starts.
    struct FolderListing {
        let path: VirtualPath
        /// The prefix of the folder's keys.
        let folder: String
        private let backend: S3Backend
        /// The token of the next page; `nil` before the first and after the last.
        private(set) var continuation: String?
        private(set) var ended = false
        /// Whether any key (a marker included) was under the folder.
        private(set) var sawAnything = false
        private var files = Set<String>()

        init(_ path: VirtualPath, in backend: S3Backend) {
            self.path = path
            self.backend = backend
            folder = backend.folderKey(path)
        }

        /// The items `page` shows, recording where the next one starts.
        mutating func nodes(of page: S3Listing) -> [FileNode] {
            var nodes: [FileNode] = []
            for object in page.objects {
                sawAnything = true
                // The folder's own marker and `a//b` have no name; one Coffer cannot show as it is gets a safe one.
                guard let name = backend.names.shown(String(object.key.dropFirst(folder.count)), in: folder) else { continue }
                files.insert(name)
                nodes.append(backend.fileNode(path.appending(trustedName: name), object))
            }
            for common in page.commonPrefixes {
                sawAnything = true
                guard let name = backend.names.shown(String(common.dropFirst(folder.count).dropLast()), in: folder),
                      !files.contains(name) else { continue }
                nodes.append(backend.folderNode(path.appending(trustedName: name)))
            }
            continuation = page.continuation
            ended = page.continuation == nil
            // The bucket's trash and versions are at its top: a mount of the whole bucket does not show them.
            let kept = path.isRoot ? backend.hiddenAtTop : []
            return nodes.filter { !PartialName.isPartial($0.name) && !kept.contains($0.name) }
        }
    }

    public func node(at path: VirtualPath) async throws -> FileNode {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.nodeSync(path) }
    }

    func nodeSync(_ path: VirtualPath) throws(CofferError) -> FileNode {
        if path.isRoot { return folderNode(path) }
        if let object = try client.head(key(path)) { return fileNode(path, object) }
        if try isFolder(path) { return folderNode(path) }
        // A safe name not met yet (a command run on its own): its folder's listing says what it stands for.
        if let parent = path.parent, path.name.contains("%") || path.name.contains("…"),
           !names.knows(path.name, in: folderKey(parent)), (try? listFolder(parent)) != nil,
           names.knows(path.name, in: folderKey(parent)) {
            return try nodeSync(path)
        }
        throw CofferError(.noSuchFile, path: path)
    }

    /// Whether anything (a marker or items) is under the folder key of `path`.
    func isFolder(_ path: VirtualPath) throws(CofferError) -> Bool {
        if path.isRoot { return true }
        let page = try client.list(prefix: folderKey(path), continuation: nil, maxKeys: 1)
        return !page.objects.isEmpty || !page.commonPrefixes.isEmpty
    }

    public func openFile(at path: VirtualPath) async throws -> any ReadableFile {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> any ReadableFile in
            guard let object = try self.client.head(self.key(path)) else {
                throw CofferError(try self.isFolder(path) ? .isADirectory : .noSuchFile, path: path)
            }
            return S3ReadableFile(client: self.client, key: object.key, path: path, size: object.size, etag: object.etag,
                                  attributes: S3Attributes.attributes(from: object.metadata),
                                  transfers: self.transfers, cache: self.cache)
        }
    }
}

/// A write spooled to a local file until it is committed. When the write was announced
/// big and dated (a copy), its parts go to the server while it is still being written.
final class S3PendingWrite: PendingWrite {
    let backend: S3Backend
    let path: VirtualPath
    let spool: String
    let expected: ExpectedWrite?
    /// The object at the path when the write began: the only one a replace may replace.
    let observed: S3Object?
    struct State {
        var fd: Int32 = -1
        var size: Int64 = 0
        var modified: Date?
        /// The `user.` attributes given, as metadata headers.
        var metadata: [(name: String, value: String)] = []
        /// The upload started while writing, if any.
        var sender: S3PartSender?
        var startFailed = false
    }
    let state = Mutex<State>(State())

    init(backend: S3Backend, path: VirtualPath, spoolFolder: String, expected: ExpectedWrite?,
         observed: S3Object?) throws(CofferError) {
        self.backend = backend
        self.observed = observed
        self.path = path
        // A fresh name, made and opened close-on-exec in one step (mkstemp's descriptor is not).
        var fd: Int32 = -1
        var name = ""
        repeat {
            name = spoolFolder + "/.coffer-s3-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        } while fd < 0 && errno == EEXIST
        guard fd >= 0 else { throw CofferError(.ioError, path: path, detail: "no room to spool the write", errno: errno) }
        spool = name
        self.expected = expected
        state.withLock { $0.fd = fd }
    }

    func write(_ bytes: [UInt8]) async throws {
        let path = path
        let (size, fd, sender, failed, metadata) = try state.withLock { (state) throws(CofferError) in
            guard state.fd >= 0 else { throw CofferError(.invalidOperation, path: path) }
            var done = 0
            while done < bytes.count {
                let written = bytes.withUnsafeBytes { Glibc.write(state.fd, $0.baseAddress! + done, $0.count - done) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    throw CofferError(errno == ENOSPC ? .outOfSpace : .ioError, path: path, errno: errno)
                }
                done += written
            }
            state.size += Int64(bytes.count)
            return (state.size, state.fd, state.sender, state.startFailed, state.metadata)
        }
        if let sender {
            sender.send(wholePartsWithin: size)
        } else if !failed, let expected, let date = expected.modificationDate, let total = expected.size,
                  total > backend.transfers.multipartThreshold, size >= backend.transfers.partSize(for: total) {
            // The first whole part is written: the upload starts, with the announced date.
            let (backend, key) = (backend, backend.key(path))
            let contentType = backend.contentType(for: path)
            let started = try? await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
                try backend.startParts(fd, key: key, contentType: contentType, modified: date, metadata: metadata, size: total)
            }
            state.withLock { state in
                state.sender = started
                state.startFailed = started == nil
            }
            started?.send(wholePartsWithin: size)
        }
    }

    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {
        if let modificationDate { state.withLock { $0.modified = modificationDate } }
    }

    /// Kept as metadata headers until the commit; an upload already started (which took the
    /// headers given before its first part) keeps what it started with.
    func setUserAttributes(_ attributes: UserAttributes) async -> [LostAttribute] {
        // The modification time is metadata too, and counts in S3's 2 KB.
        let (headers, lost) = S3Attributes.headers(for: attributes, besides: "mtime".utf8.count + 21)
        state.withLock { $0.metadata = headers }
        return lost
    }

    func commit(conflict: ConflictPolicy) async throws {
        let (size, modified, sender, metadata) = state.withLock { ($0.size, $0.modified, $0.sender, $0.metadata) }
        let (backend, spool, path, observed) = (backend, spool, path, observed)
        // An upload started with the announced date is finished only if the date is still that.
        let started = sender.flatMap { modified == expected?.modificationDate ? $0 : nil }
        defer { discard() }
        let conditional = expected?.replacing != nil
        try await BlockingIO.run(waitingOnNetwork: true) { cancel throws(CofferError) in
            do throws(CofferError) {
                try backend.commit(spool, size: size, modified: modified, metadata: metadata, at: path, conflict: conflict,
                                   observed: observed, cancel: cancel, started: started)
            } catch where conditional && error.detail == "s3-changed" {
                // A conditional save (a version was named): the version changed since it was read.
                let now = try? backend.client.head(backend.key(path)).map { backend.fileNode(path, $0) }
                throw CofferError.changedSinceRead(path, now: now ?? nil)
            }
        }
        if started != nil { state.withLock { $0.sender = nil } }
    }

    func abort() async { discard() }

    /// Removes the spool; an upload started while writing is stopped and dropped first, off
    /// the caller's thread, and the spool closed after it.
    func discard() {
        let (fd, sender) = state.withLock { state in
            defer { (state.fd, state.sender) = (-1, nil) }
            return (state.fd, state.sender)
        }
        guard fd >= 0 else { return }
        unlink(spool)
        guard let sender else {
            Glibc.close(fd)
            return
        }
        let backend = backend
        Thread.detachNewThread {
            sender.drop(with: backend.abandon)
            Glibc.close(fd)
        }
    }

    deinit { discard() }
}

extension S3Backend: TreeListingBackend {
    /// One flat listing of every key under the folder (no delimiter), folded into folders
    /// as ``contentsOfFolder(at:)`` folds one level: markers and key names as folders, a name
    /// that is both a file and a prefix as the file, unusable names and partials left out.
    public func contentsOfTree(at path: VirtualPath) async throws -> [VirtualPath: [FileNode]] {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.treeSync(path) }
    }

    func treeSync(_ path: VirtualPath) throws(CofferError) -> [VirtualPath: [FileNode]] {
        let top = folderKey(path)
        let objects = try allObjects(under: top)
        if objects.isEmpty && !path.isRoot { throw CofferError(.noSuchFile, path: path) }
        // Names are keyed by their bytes: a String key would merge `café` in NFC and in NFD,
        // two objects a folder-by-folder listing shows as two items.
        var files: [VirtualPath: [[UInt8]: FileNode]] = [path: [:]]
        var folders: [VirtualPath: [[UInt8]: String]] = [path: [:]]
        let kept = hiddenAtTop
        objects: for object in objects {
            var names = object.key.dropFirst(top.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let isMarker = names.last == ""
            if isMarker { names.removeLast() }
            guard !names.isEmpty else { continue }  // the folder's own marker
            if path.isRoot, kept.contains(names[0]) { continue }
            var folder = path
            var folderKey = top
            for (index, raw) in names.enumerated() {
                guard let name = self.names.shown(raw, in: folderKey), !PartialName.isPartial(name) else { continue objects }
                folderKey += raw + "/"
                if index == names.count - 1 && !isMarker {
                    files[folder, default: [:]][Array(name.utf8)] = fileNode(folder.appending(trustedName: name), object)
                } else {
                    folders[folder, default: [:]][Array(name.utf8)] = name
                    folder = folder.appending(trustedName: name)
                    if files[folder] == nil { files[folder] = [:] }
                    if folders[folder] == nil { folders[folder] = [:] }
                }
            }
        }
        var tree: [VirtualPath: [FileNode]] = [:]
        for (folder, held) in files {
            let subfolders = (folders[folder] ?? [:]).filter { held[$0.key] == nil }.values
            tree[folder] = Array(held.values) + subfolders.map { folderNode(folder.appending(trustedName: $0)) }
        }
        return tree
    }
}
