import CofferCore
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
    private let spoolFolder: String
    let registry: TypeRegistry
    let transfers: S3Transfers
    /// The uploads in parts under way, for the clean-up after a kill (`nil`: none kept).
    private let ledger: S3UploadLedger?
    private let swept = Atomic<Bool>(false)

    /// - Parameters:
    ///   - spoolFolder: a local folder for writes waiting to be committed (the container's
    ///     `tmp/`); it must exist.
    ///   - ledgerFolder: where the uploads in parts under way are noted, so that those of a
    ///     killed process are dropped later (the container's `AppData/S3Uploads`).
    public convenience init(configuration: S3Configuration, spoolFolder: String, ledgerFolder: String? = nil,
                            transfers: S3Transfers = S3Transfers(), registry: TypeRegistry = .standard) {
        self.init(client: S3Client(configuration), spoolFolder: spoolFolder, ledgerFolder: ledgerFolder,
                  transfers: transfers, registry: registry)
    }

    init(client: S3Client, spoolFolder: String, ledgerFolder: String? = nil, transfers: S3Transfers = S3Transfers(),
         registry: TypeRegistry = .standard) {
        self.client = client
        self.spoolFolder = spoolFolder
        self.transfers = transfers
        self.registry = registry
        self.ledger = ledgerFolder.map {
            S3UploadLedger(folder: $0, endpoint: client.configuration.endpoint, bucket: client.configuration.location.bucket)
        }
    }

    // MARK: Keys

    private var prefix: String { client.configuration.location.prefix }

    /// The key of the file at `path`.
    func key(_ path: VirtualPath) -> String { prefix + path.components.joined(separator: "/") }

    /// The prefix of what the folder at `path` holds (its marker's key too).
    func folderKey(_ path: VirtualPath) -> String { path.isRoot ? prefix : key(path) + "/" }

    // MARK: Reading

    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        try await BlockingIO.run { _ throws(CofferError) in try self.listFolder(path) }
    }

    func listFolder(_ path: VirtualPath) throws(CofferError) -> [FileNode] {
        let folder = folderKey(path)
        var nodes: [FileNode] = []
        var files = Set<String>()
        var sawAnything = false
        var continuation: String?
        repeat {
            let page = try client.list(prefix: folder, continuation: continuation)
            for object in page.objects {
                sawAnything = true
                let name = String(object.key.dropFirst(folder.count))
                guard Self.isUsable(name) else { continue }  // the folder's own marker, or a name Coffer cannot show
                files.insert(name)
                nodes.append(fileNode(path.appending(trustedName: name), object))
            }
            for common in page.commonPrefixes {
                sawAnything = true
                let name = String(common.dropFirst(folder.count).dropLast())
                guard Self.isUsable(name), !files.contains(name) else { continue }
                nodes.append(folderNode(path.appending(trustedName: name)))
            }
            continuation = page.continuation
        } while continuation != nil
        if !sawAnything && !path.isRoot { throw CofferError(.noSuchFile, path: path) }
        // The bucket's trash is at its top: a mount of the whole bucket does not show it.
        let trash = path.isRoot && prefix.isEmpty ? String(trashPrefix.dropLast()) : nil
        return nodes.filter { !PartialName.isPartial($0.name) && $0.name != trash }
    }

    public func node(at path: VirtualPath) async throws -> FileNode {
        try await BlockingIO.run { _ throws(CofferError) in try self.nodeSync(path) }
    }

    func nodeSync(_ path: VirtualPath) throws(CofferError) -> FileNode {
        if path.isRoot { return folderNode(path) }
        if let object = try client.head(key(path)) { return fileNode(path, object) }
        if try isFolder(path) { return folderNode(path) }
        throw CofferError(.noSuchFile, path: path)
    }

    /// Whether anything (a marker or items) is under the folder key of `path`.
    private func isFolder(_ path: VirtualPath) throws(CofferError) -> Bool {
        if path.isRoot { return true }
        let page = try client.list(prefix: folderKey(path), continuation: nil, maxKeys: 1)
        return !page.objects.isEmpty || !page.commonPrefixes.isEmpty
    }

    public func openFile(at path: VirtualPath) async throws -> any ReadableFile {
        try await BlockingIO.run { _ throws(CofferError) -> any ReadableFile in
            guard let object = try self.client.head(self.key(path)) else {
                throw CofferError(try self.isFolder(path) ? .isADirectory : .noSuchFile, path: path)
            }
            return S3ReadableFile(client: self.client, key: object.key, path: path, size: object.size, etag: object.etag)
        }
    }

    // MARK: Changing

    public func createFolder(at path: VirtualPath) async throws {
        try await BlockingIO.run { _ throws(CofferError) in
            guard !path.isRoot else { throw CofferError(.fileExists, path: path) }
            try self.requireFolder(path.parent!, for: path)
            if try self.client.head(self.key(path)) != nil { throw CofferError(.fileExists, path: path) }
            if try self.isFolder(path) { throw CofferError(.fileExists, path: path) }
            do throws(CofferError) {
                try self.client.put(self.folderKey(path), body: .bytes([]), modified: Date(), condition: .absent)
            } catch where error.kind == .fileExists {
                throw CofferError(.fileExists, path: path)
            }
        }
    }

    /// Throws `noSuchFile` (naming `path`) unless `folder` is a folder.
    private func requireFolder(_ folder: VirtualPath, for path: VirtualPath) throws(CofferError) {
        if folder.isRoot { return }
        if try client.head(key(folder)) != nil { throw CofferError(.notADirectory, path: folder) }
        guard try isFolder(folder) else { throw CofferError(.noSuchFile, path: path) }
    }

    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite {
        try await BlockingIO.run { _ throws(CofferError) -> any PendingWrite in
            guard let parent = path.parent else { throw CofferError(.isADirectory, path: path) }
            self.sweepAbandonedUploads()
            try self.requireFolder(parent, for: path)
            return try S3PendingWrite(backend: self, path: path, spoolFolder: self.spoolFolder)
        }
    }

    /// Puts the spooled file at `path` under `conflict`'s rule: one PUT up to
    /// ``S3Transfers/multipartThreshold``, else an upload in parts read from the spool.
    func commit(_ spool: String, size: Int64, modified: Date?, at path: VirtualPath,
                conflict: ConflictPolicy, cancel: CancellationFlag) throws(CofferError) {
        let key = key(path)
        let condition: S3WriteCondition
        if let existing = try client.head(key) {
            guard conflict == .replace else { throw CofferError(.fileExists, path: path) }
            condition = .unchanged(etag: existing.etag)
        } else {
            if try isFolder(path) {
                guard conflict == .replace else { throw CofferError(.fileExists, path: path) }
                try removeSync(path)
            }
            condition = .absent
        }
        let fd = open(spool, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError(.ioError, path: path, detail: "the spooled write could not be read") }
        defer { close(fd) }
        let contentType = registry.type(withIdentifier: registry.typeIdentifier(forFileNamed: path.name))?.mimeTypes.first
        do throws(CofferError) {
            if size <= transfers.multipartThreshold {
                try client.put(key, body: .file(descriptor: fd, offset: 0, length: size) { cancel.isCancelled },
                               contentType: contentType, modified: modified ?? Date(), condition: condition)
            } else {
                try uploadInParts(fd, size: size, to: key, contentType: contentType, modified: modified ?? Date(),
                                  condition: condition, cancel: cancel)
            }
        } catch where error.kind == .fileExists {
            throw CofferError(.fileExists, path: path)
        } catch {
            throw error.path == nil ? error.naming(path) : error
        }
    }

    /// Sends `size` bytes of `fd` as an upload in parts, ``S3Transfers/parallelParts`` at a
    /// time, each read from the file as it goes (memory stays at libcurl's buffers). Any
    /// failure or a cancel drops the upload; one left by a killed process is in the ledger
    /// and dropped by the next process that writes to the bucket.
    private func uploadInParts(_ fd: Int32, size: Int64, to key: String, contentType: String?, modified: Date,
                               condition: S3WriteCondition, cancel: CancellationFlag) throws(CofferError) {
        let upload = try client.startUpload(key, contentType: contentType, modified: modified)
        ledger?.started(upload)
        do throws(CofferError) {
            let partSize = transfers.partSize(for: size)
            let count = Int((size + partSize - 1) / partSize)
            let etags = Mutex<[String?]>(Array(repeating: nil, count: count))
            let failure = Mutex<CofferError?>(nil)
            let next = Atomic<Int>(0)
            let stop: @Sendable () -> Bool = { cancel.isCancelled || failure.withLock { $0 != nil } }
            let group = DispatchGroup()
            let client = client
            for _ in 0..<min(count, transfers.parallelParts) {
                DispatchQueue.global().async(group: group) {
                    while !stop() {
                        let index = next.add(1, ordering: .relaxed).oldValue
                        guard index < count else { return }
                        let offset = Int64(index) * partSize
                        do throws(CofferError) {
                            let etag = try client.sendPart(index + 1, of: upload, body: .file(
                                descriptor: fd, offset: offset, length: min(partSize, size - offset), stop: stop))
                            etags.withLock { $0[index] = etag }
                        } catch {
                            failure.withLock { if $0 == nil || $0?.kind == .cancelled { $0 = error } }
                        }
                    }
                }
            }
            group.wait()
            try cancel.check(nil)
            if let error = failure.withLock({ $0 }) { throw error }
            // Ceph RGW 16.2 finishes an upload whatever its conditions say (checked), so they
            // are checked here too, just before; AWS checks them itself.
            switch condition {
            case .none: break
            case .absent: if try client.head(key) != nil { throw CofferError(.fileExists) }
            case .unchanged(let etag): if try client.head(key)?.etag != etag { throw CofferError(.fileExists) }
            }
            try client.finish(upload, parts: etags.withLock { $0.compactMap { $0 } }, condition: condition)
            ledger?.ended(upload)
        } catch {
            if (try? client.abandon(upload)) != nil { ledger?.ended(upload) }
            throw error
        }
    }

    /// Drops, once per backend and in the background, the uploads in parts that killed
    /// processes of this container left in the bucket.
    private func sweepAbandonedUploads() {
        guard let ledger, swept.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let client = client
        DispatchQueue.global(qos: .utility).async {
            ledger.recover { upload throws(CofferError) in try client.abandon(upload) }
        }
    }

    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        try await BlockingIO.run { _ throws(CofferError) in
            guard !source.isRoot, !destination.isRoot else { throw CofferError(.invalidOperation, path: source) }
            guard source != destination else { return }
            guard !source.contains(destination) else { throw CofferError(.invalidOperation, path: destination) }
            let moving = try self.nodeSync(source)
            try self.requireFolder(destination.parent!, for: destination)
            if (try? self.nodeSync(destination)) != nil {
                guard conflict == .replace else { throw CofferError(.fileExists, path: destination) }
                try self.removeSync(destination)
            }
            if moving.kind == .file {
                try self.copyObject(from: self.key(source), to: self.key(destination), size: moving.size)
                try self.client.delete(self.key(source))
                return
            }
            try self.moveObjects(from: self.folderKey(source), to: self.folderKey(destination))
        }
    }

    public func removeItem(at path: VirtualPath) async throws {
        try await BlockingIO.run { _ throws(CofferError) in try self.removeSync(path) }
    }

    func removeSync(_ path: VirtualPath) throws(CofferError) {
        // The mount's root is never removed (it would empty the bucket or the prefix).
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        if try client.head(key(path)) != nil {
            try client.delete(key(path))
            return
        }
        let objects = try allObjects(under: folderKey(path))
        guard !objects.isEmpty else { throw CofferError(.noSuchFile, path: path) }
        for object in objects { try client.delete(object.key) }
    }

    /// Every object under `prefix`, in pages of 1,000, without the delimiter.
    func allObjects(under prefix: String) throws(CofferError) -> [S3Object] {
        var objects: [S3Object] = []
        var continuation: String?
        repeat {
            let page = try client.list(prefix: prefix, delimiter: nil, continuation: continuation)
            objects += page.objects
            continuation = page.continuation
        } while continuation != nil
        return objects
    }

    /// A folder moved: every object under the prefix `from` copied to the same name under
    /// `to`, then every one deleted (a folder without objects gets its marker at `to`).
    /// Interrupted, each object is at its old place or at both (copied, not yet deleted).
    func moveObjects(from: String, to: String) throws(CofferError) {
        let objects = try allObjects(under: from)
        for object in objects {
            try copyObject(from: object.key, to: to + object.key.dropFirst(from.count), size: object.size)
        }
        if objects.isEmpty { try client.put(to, body: .bytes([]), modified: Date(), condition: .absent) }
        for object in objects { try client.delete(object.key) }
    }

    /// A copy on the server: one request up to ``S3Transfers/copyPartLimit``, else in parts.
    func copyObject(from source: String, to destination: String, size: Int64) throws(CofferError) {
        if size <= transfers.copyPartLimit {
            try client.copy(from: source, to: destination)
        } else {
            try client.copyInParts(from: source, to: destination, size: size, partSize: transfers.partSize(for: size))
        }
    }

    // MARK: Nodes

    private func fileNode(_ path: VirtualPath, _ object: S3Object) -> FileNode {
        FileNode(path: path, kind: .file, size: object.size, modificationDate: object.modified,
                 isHidden: FileNode.isDotName(path.name), typeIdentifier: registry.typeIdentifier(forFileNamed: path.name))
    }

    private func folderNode(_ path: VirtualPath) -> FileNode {
        let type = path.isRoot ? FileType.Identifier.folder : registry.typeIdentifier(forFolderNamed: path.name)
        return FileNode(path: path, kind: type == FileType.Identifier.folder ? .folder : .package, size: 0,
                        modificationDate: .distantPast, isHidden: FileNode.isDotName(path.name), typeIdentifier: type)
    }

    /// A name one level down that Coffer can show: not empty (the folder's own marker, or
    /// `a//b`), no `/`, and a valid file name.
    private static func isUsable(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && FileName.problem(with: name) == nil
    }
}

/// A remote file read in ranges, each checked against the ETag seen when it was opened: a
/// file replaced while it is read fails the read instead of mixing two versions. Reads
/// are served from the last block fetched (at least 1 MiB), so reading in small pieces
/// costs one request a block, not one a piece.
final class S3ReadableFile: ReadableFile {
    let size: Int64
    private let client: S3Client
    private let key: String
    private let path: VirtualPath
    private let etag: String
    private let state = Mutex<(position: Int64, block: (offset: Int64, bytes: [UInt8]))>((0, (0, [])))
    static let blockSize: Int64 = 1 << 20

    init(client: S3Client, key: String, path: VirtualPath, size: Int64, etag: String) {
        self.client = client
        self.key = key
        self.path = path
        self.size = size
        self.etag = etag
    }

    func read(upTo count: Int) async throws -> [UInt8] {
        let offset = state.withLock { $0.position }
        let bytes = try await read(at: offset, upTo: count)
        state.withLock { $0.position = offset + Int64(bytes.count) }
        return bytes
    }

    func read(at offset: Int64, upTo count: Int) async throws -> [UInt8] {
        guard offset < size, count > 0 else { return [] }
        let end = min(size, offset + Int64(count))
        if let held = cached(offset..<end) { return held }
        let blockEnd = min(size, offset + max(Int64(count), Self.blockSize))
        let (client, key, etag, path) = (client, key, etag, path)
        let block = try await BlockingIO.run { _ throws(CofferError) -> [UInt8] in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(blockEnd - offset))
            do throws(CofferError) {
                try client.get(key, range: offset..<blockEnd, ifMatch: etag) { bytes += $0; return true }
            } catch where error.kind == .fileExists {
                throw CofferError(.ioError, path: path, detail: "the file changed on the server while it was read")
            } catch where error.kind == .noSuchFile {
                throw CofferError(.noSuchFile, path: path)
            }
            return bytes
        }
        state.withLock { $0.block = (offset, block) }
        return Array(block.prefix(Int(end - offset)))
    }

    private func cached(_ range: Range<Int64>) -> [UInt8]? {
        state.withLock { state -> [UInt8]? in
            let block = state.block
            guard range.lowerBound >= block.offset, range.upperBound <= block.offset + Int64(block.bytes.count) else { return nil }
            return Array(block.bytes[Int(range.lowerBound - block.offset)..<Int(range.upperBound - block.offset)])
        }
    }

    func close() async {}
}

/// A write spooled to a local file until it is committed.
final class S3PendingWrite: PendingWrite {
    private let backend: S3Backend
    private let path: VirtualPath
    private let spool: String
    private let state = Mutex<(fd: Int32, size: Int64, modified: Date?)>((-1, 0, nil))

    init(backend: S3Backend, path: VirtualPath, spoolFolder: String) throws(CofferError) {
        self.backend = backend
        self.path = path
        var template = Array((spoolFolder + "/.coffer-s3-XXXXXX").utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { throw CofferError(.ioError, path: path, detail: "no room to spool the write", errno: errno) }
        spool = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        state.withLock { $0.fd = fd }
    }

    func write(_ bytes: [UInt8]) async throws {
        let path = path
        try state.withLock { (state) throws(CofferError) in
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
        }
    }

    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {
        if let modificationDate { state.withLock { $0.modified = modificationDate } }
    }

    func commit(conflict: ConflictPolicy) async throws {
        let (size, modified) = state.withLock { ($0.size, $0.modified) }
        let (backend, spool, path) = (backend, spool, path)
        defer { discard() }
        try await BlockingIO.run { cancel throws(CofferError) in
            try backend.commit(spool, size: size, modified: modified, at: path, conflict: conflict, cancel: cancel)
        }
    }

    func abort() async { discard() }

    private func discard() {
        state.withLock { state in
            if state.fd >= 0 {
                Glibc.close(state.fd)
                unlink(spool)
                state.fd = -1
            }
        }
    }

    deinit { discard() }
}
