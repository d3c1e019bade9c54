import CofferBackends
import CofferCore
import CofferRuntime
import Foundation
import Synchronization

/// Uploads in progress: files sent in chunks, kept out of sight until committed.
///
/// Each upload's data goes to a temporary file of its own in `Library/Caches/Downloading`,
/// opened for each chunk and closed after it: an open upload holds no descriptor while it waits
/// for its next chunk. Commit makes it durable and places it at its destination like any copy
/// (conflicts settled by the service); abort, the end of the session that began it and an hour
/// without data remove it. Nothing of an upload is ever visible in `files:` before commit. An upload
/// belongs to the session that began it: to any other its id is unknown.
final class UploadRegistry: Sendable {
    struct Upload {
        /// Where the data goes until commit, in the uploads area.
        var temporary: VirtualPath
        var destination: VirtualPath
        var conflict: ConflictPolicy
        var expectedSize: Int64?
        var received: Int64 = 0
        var lastActivity: Date
        /// The number of the session that began it (`nil`: begun outside any session).
        var owner: Int?
        var isBusy = false
    }

    let backend: LocalSandboxBackend
    /// The uploads area on the host.
    let path: String

    /// The host path of an upload's data (a name the registry made: `upload-UUID`).
    func hostPath(of temporary: VirtualPath) -> String { path + "/" + temporary.name }

    /// Creates an upload's empty data file; it must not exist.
    func create(_ temporary: VirtualPath) throws(CofferError) {
        let fd = open(hostPath(of: temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: temporary) }
        close(fd)
    }

    /// Writes `bytes` at `offset` of an upload's data: opened for this chunk, closed after it.
    func write(_ bytes: [UInt8], at offset: Int64, to temporary: VirtualPath) throws(CofferError) {
        let fd = open(hostPath(of: temporary), O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: temporary) }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset) + off_t(written)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CofferError.lastSystemError("write", path: temporary)
            }
            written += count
        }
    }

    /// Makes an upload's data durable before it is placed.
    func sync(_ temporary: VirtualPath) throws(CofferError) {
        let fd = open(hostPath(of: temporary), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: temporary) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw CofferError.lastSystemError("fsync", path: temporary) }
    }

    /// Removes an upload's data.
    func remove(_ temporary: VirtualPath) { unlink(hostPath(of: temporary)) }
    private let uploads = Mutex<[String: Upload]>([:])
    static let mountName = "uploads"
    /// The names of uploads' data in the uploads folder.
    static let temporaryPrefix = "upload-"

    init(path: String, journal: OperationJournal?) throws(CofferError) {
        backend = try LocalSandboxBackend(rootPath: path, syncBeforeCommit: false, journal: journal)
        self.path = path
    }

    /// The most uploads one session may have open, and all sessions together: each holds
    /// a descriptor, and a client that opens hundreds must not starve the others of them.
    static let maxPerSession = 32
    static let maxInAll = 512

    /// Registers an upload, unless its session (or everyone) has as many open as allowed.
    func add(_ upload: Upload) throws(CofferError) -> String {
        let id = UUID().uuidString.lowercased()
        let admitted = uploads.withLock { uploads -> Bool in
            let mine = uploads.values.count { $0.owner == upload.owner }
            guard mine < Self.maxPerSession, uploads.count < Self.maxInAll else { return false }
            uploads[id] = upload
            return true
        }
        guard admitted else { throw CofferError(.tooLarge, path: upload.destination, detail: "too-many-uploads") }
        return id
    }

    /// Marks an upload busy for one append, checking that `offset` continues it.
    func claim(_ id: String, offset: Int64, count: Int, owner: Int?) throws(CofferError) -> Upload {
        let result = uploads.withLock { uploads -> Result<Upload, CofferError> in
            guard var upload = uploads[id], upload.owner == owner else {
                return .failure(CofferError(.notFoundUpload, detail: id))
            }
            guard !upload.isBusy else {
                return .failure(CofferError(.invalidArgument, detail: "another chunk of upload \(id) is being written"))
            }
            guard offset == upload.received else {
                return .failure(CofferError(.invalidArgument, path: upload.destination,
                                            detail: "offset \(offset), but \(upload.received) bytes were received"))
            }
            if let expected = upload.expectedSize, upload.received + Int64(count) > expected {
                return .failure(CofferError(.tooLarge, path: upload.destination, detail: "\(expected) bytes"))
            }
            upload.isBusy = true
            uploads[id] = upload
            return .success(upload)
        }
        return try result.get()
    }

    func release(_ id: String, adding count: Int) {
        uploads.withLock { uploads in
            uploads[id]?.isBusy = false
            uploads[id]?.received += Int64(count)
            uploads[id]?.lastActivity = Date()
        }
    }

    /// How far an upload of session `owner` has come: bytes received and the size announced.
    func status(_ id: String, owner: Int?) throws(CofferError) -> (received: Int64, expected: Int64?, destination: VirtualPath) {
        let found = uploads.withLock { uploads -> Upload? in
            guard let upload = uploads[id], upload.owner == owner else { return nil }
            return upload
        }
        guard let found else { throw CofferError(.notFoundUpload, detail: id) }
        return (found.received, found.expectedSize, found.destination)
    }

    /// Removes an upload from the registry (for commit or abort).
    func take(_ id: String, owner: Int?) throws(CofferError) -> Upload {
        let upload = uploads.withLock { uploads -> Upload? in
            guard let upload = uploads[id], upload.owner == owner, !upload.isBusy else { return nil }
            uploads[id] = nil
            return upload
        }
        guard let upload else { throw CofferError(.notFoundUpload, detail: id) }
        return upload
    }

    /// Removes the uploads idle since before `cutoff` (all of them for `.distantFuture`) of
    /// one session, or of every session when `owner` is `nil`.
    func takeIdle(before cutoff: Date, ownedBy owner: Int? = nil) -> [Upload] {
        uploads.withLock { uploads in
            let idle = uploads.filter { entry in
                !entry.value.isBusy && entry.value.lastActivity < cutoff && (owner == nil || entry.value.owner == owner)
            }
            for id in idle.keys { uploads[id] = nil }
            return Array(idle.values)
        }
    }
}

extension FileService {
    /// How long an upload may go without data before it is removed.
    public static let uploadIdleLimit: TimeInterval = 60 * 60

    private nonisolated func requireUploads() throws(CofferError) -> UploadRegistry {
        guard let uploadRegistry else { throw CofferError(.unsupported, detail: "uploads") }
        return uploadRegistry
    }

    /// Starts an upload to `path` for the session numbered `owner`. Its folder must exist;
    /// with `.fail` the name must be free now (and is checked again at commit). `size`,
    /// when given, caps what may be appended.
    func beginUpload(to path: VirtualPath, conflict: ConflictPolicy, size: Int64?,
                     owner: Int?) async throws(CofferError) -> String {
        let registry = try requireUploads()
        _ = try writableMount(for: path)
        guard let parent = path.parent else { throw CofferError(.isADirectory, path: path) }
        guard try await stat(parent).kind != .file else { throw CofferError(.notADirectory, path: parent) }
        if conflict == .fail, try await exists(path) { throw CofferError(.fileExists, path: path) }
        if let size, size < 0 { throw CofferError(.invalidArgument, path: path, detail: "negative size") }
        let temporary = VirtualPath.root(of: UploadRegistry.mountName).appending(trustedName: UploadRegistry.temporaryPrefix + UUID().uuidString)
        let id = try registry.add(UploadRegistry.Upload(temporary: temporary, destination: path, conflict: conflict,
                                                        expectedSize: size, lastActivity: Date(), owner: owner))
        do {
            try await BlockingIO.run { _ throws(CofferError) in try registry.create(temporary) }
        } catch {
            _ = try? registry.take(id, owner: owner)
            throw error.naming(path, insteadOf: UploadRegistry.mountName)
        }
        return id
    }

    /// How far upload `id` has come (a resumable upload asks before it goes on).
    nonisolated func uploadStatus(_ id: String, owner: Int?) throws(CofferError) -> UploadStatus {
        let (received, expected, destination) = try requireUploads().status(id, owner: owner)
        return UploadStatus(received: received, expectedSize: expected, destination: destination)
    }

    /// Appends `bytes` at `offset`, which must be what was received so far. Returns the new total.
    func appendUpload(_ id: String, offset: Int64, bytes: [UInt8], owner: Int?) async throws(CofferError) -> Int64 {
        let registry = try requireUploads()
        let upload = try registry.claim(id, offset: offset, count: bytes.count, owner: owner)
        do {
            try await BlockingIO.run { _ throws(CofferError) in try registry.write(bytes, at: offset, to: upload.temporary) }
        } catch {
            registry.release(id, adding: 0)
            // A failed write leaves the upload in an unknown state: end it.
            if let broken = try? registry.take(id, owner: owner) { registry.remove(broken.temporary) }
            throw error.naming(upload.destination, insteadOf: UploadRegistry.mountName)
        }
        registry.release(id, adding: bytes.count)
        return upload.received + Int64(bytes.count)
    }

    /// Places a finished upload at its destination and returns the node.
    /// With `ifVersion`, a conditional save (``writeFile(_:bytes:conflict:ifVersion:)``).
    func commitUpload(_ id: String, owner: Int?, ifVersion: FileVersion? = nil) async throws(CofferError) -> FileNode {
        let registry = try requireUploads()
        let upload = try registry.take(id, owner: owner)
        if let expected = upload.expectedSize, expected != upload.received {
            registry.remove(upload.temporary)
            throw CofferError(.invalidArgument, path: upload.destination,
                              detail: "\(upload.received) of \(expected) bytes were sent")
        }
        let temporary = upload.temporary
        let destinationBackend: any StorageBackend
        do throws(CofferError) {
            destinationBackend = try writableMount(for: upload.destination).backend
            // Durable before it is placed: a crash after the commit never leaves a file short.
            try await BlockingIO.run { _ throws(CofferError) in try registry.sync(temporary) }
        } catch {
            registry.remove(temporary)
            throw error.naming(upload.destination, insteadOf: UploadRegistry.mountName)
        }
        let path = try await place(temporary, of: registry, at: upload.destination, in: destinationBackend,
                                   conflict: upload.conflict, expecting: ifVersion, progress: .none)
        return await placedNode(path, made: writtenFile(path, size: Int(upload.received)))
    }

    /// Moves a file of the uploads area to `destination` under `conflict` — renamed into a
    /// local mount on the same disk, else copied — and removes what is left of it: always for
    /// an upload (whose data lives no longer than its commit), only once placed for a download
    /// (which can be placed again later).
    private func place(_ temporary: VirtualPath, of registry: UploadRegistry, at destination: VirtualPath,
                       in destinationBackend: any StorageBackend, conflict: ConflictPolicy, expecting version: FileVersion? = nil,
                       progress: ProgressReporter, keepingOnFailure: Bool = false) async throws(CofferError) -> VirtualPath {
        let source = registry.backend
        let placed: Result<VirtualPath, CofferError>
        do throws(CofferError) {
            placed = .success(try await settle(destination, conflict: conflict, arriving: .file, expecting: version) { target, policy in
                // A local destination on the cache's disk takes the file by a rename; any other, by a copy.
                if let local = destinationBackend as? LocalSandboxBackend,
                   try await local.adoptItem(from: source, at: temporary, to: target, conflict: policy) {
                    return
                }
                try await StreamingCopy.copy(from: source, at: temporary, to: destinationBackend, at: target,
                                             conflict: policy, replacing: target == destination ? version : nil,
                                             progress: progress)
            })
        } catch {
            placed = .failure(error.naming(destination, insteadOf: UploadRegistry.mountName))
        }
        if case .success = placed { try? await source.removeItem(at: temporary) } else if !keepingOnFailure {
            try? await source.removeItem(at: temporary)
        }
        return try placed.get()
    }

    /// Where downloads keep their data until they are complete: the uploads area
    /// (`Library/Caches/Downloading`), or `nil` for a service without one.
    public nonisolated var downloadsCachePath: String? { uploadRegistry?.path }

    /// Places a finished download — `cacheName`, a file in ``downloadsCachePath`` — in
    /// `folder` as `fileName`, under a new name when that one is taken (keep both), and
    /// removes it from the cache; when it cannot be placed, it stays there. The file appears
    /// only when complete.
    /// - Throws: `invalidName` for a `cacheName` that is not a plain name there.
    package func placeDownload(_ cacheName: String, into folder: VirtualPath, as fileName: String,
                              progress: ProgressReporter = .none) async throws(CofferError) -> FileNode {
        let registry = try requireUploads()
        try FileName.validate(cacheName)
        let destination = try folder.appending(fileName)
        let destinationBackend = try writableMount(for: destination).backend
        guard try await stat(folder).kind != .file else { throw CofferError(.notADirectory, path: folder) }
        let temporary = VirtualPath.root(of: UploadRegistry.mountName).appending(trustedName: cacheName)
        let path = try await place(temporary, of: registry, at: destination, in: destinationBackend, conflict: .keepBoth,
                                   progress: progress, keepingOnFailure: true)
        return try await stat(path)
    }

    /// Discards an upload.
    func abortUpload(_ id: String, owner: Int?) async throws(CofferError) {
        let registry = try requireUploads()
        registry.remove(try registry.take(id, owner: owner).temporary)
    }

    /// Discards uploads that have had no data for `idle` seconds; all of them with `nil`.
    /// Only the session numbered `owner`'s, when given (its end discards what it left open).
    /// Returns how many.
    @discardableResult
    package func abortUploads(idleFor idle: TimeInterval?, ownedBy owner: Int? = nil) async -> Int {
        guard let registry = uploadRegistry else { return 0 }
        let cutoff = idle.map { Date().addingTimeInterval(-$0) } ?? .distantFuture
        let stale = registry.takeIdle(before: cutoff, ownedBy: owner)
        for upload in stale { registry.remove(upload.temporary) }
        return stale.count
    }
}
