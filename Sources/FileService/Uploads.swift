public import CofferBackends
@_spi(Engine) public import CofferCore
import CofferRuntime
public import Foundation
import Synchronization

/// Uploads in progress: files sent in chunks, kept out of sight until committed.
///
/// Each upload's data goes to a temporary file of its own in `Library/Caches/Downloading`,
/// opened for each chunk and closed after it: an open upload holds no descriptor while it waits
/// for its next chunk. Commit makes it durable and places it at its destination like any copy
/// (conflicts settled by the service); abort, the end of the session that began it and an hour
/// without data remove it. Nothing of an upload is ever visible in `files:` before commit. An upload
/// belongs to the session that began it: to any other its id is unknown.
///
/// A *resumable* upload (tus's) also outlives its session and its process: its id — 122
/// random bits, handed only to the session that began it — is a capability, and whoever that
/// session hands it to may go on with it (the web page begins it on its socket and sends the
/// bytes to `/tus/`; a reloaded page, or a client after a restart, presents the id again). A
/// record beside its data (`resume-ID.json`) names its destination, and after a restart the
/// upload is found again by its id, with what was received counted from the data's length —
/// while the machine has not restarted since (`BootIdentity`); after a reboot it is dropped,
/// and the client starts again. The end of a session leaves it be; an hour without data
/// removes it, as any other.
///
/// A service has uploads when its composition root registers this feature; its upkeep
/// discards uploads abandoned for ``FileService/uploadIdleLimit``.
public final class UploadRegistry: ServiceFeature {
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
        /// Whether any session holding its id may go on with it, after a restart too.
        var isResumable = false

        /// Whether the session numbered `owner`, holding the upload's id, may go on with it.
        func isOwned(by owner: Int?) -> Bool {
            self.owner == owner || isResumable
        }
    }

    /// What a resumable upload keeps beside its data, to be found again after a restart.
    struct ResumeRecord: Codable {
        var data: String
        var destination: String
        var conflict: ConflictPolicy
        var size: Int64?
        var boot: String?
    }

    static let recordPrefix = "resume-"

    /// The host path of resumable upload `id`'s record.
    func recordPath(of id: String) -> String { path + "/" + Self.recordPrefix + id + ".json" }

    let backend: LocalSandboxBackend
    /// The uploads area on the host.
    let path: String

    /// The host path of an upload's data (a name the registry made: `upload-UUID`).
    func hostPath(of temporary: VirtualPath) -> String { path + "/" + temporary.name }

    /// Creates an upload's empty data file; it must not exist.
    func create(_ temporary: VirtualPath) throws(CofferError) {
        _ = try backend.openOutputFile(at: temporary, .new)
    }

    /// Writes `bytes` at `offset` of an upload's data: opened for this chunk, closed after it.
    func write(_ bytes: [UInt8], at offset: Int64, to temporary: VirtualPath) throws(CofferError) {
        try backend.openOutputFile(at: temporary, .existing).write(bytes, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64, to temporary: VirtualPath) throws(CofferError) {
        let file = try backend.openOutputFile(at: temporary, .existing)
        try file.write(bytes, at: offset)
        // Each window of 8 MiB is sent on to the disk as soon as it is written, while the rest
        // arrives: the sync before the upload is placed then waits for the last window only.
        let window = Self.writeBackWindow
        let end = offset + Int64(bytes.count)
        if end / window > offset / window { file.startWritingBack(offset: (end / window - 1) * window, length: window) }
    }

    /// How much of an upload is written before it is sent on to the disk.
    static let writeBackWindow: Int64 = 8 << 20

    /// Makes an upload's data durable before it is placed.
    func sync(_ temporary: VirtualPath) throws(CofferError) {
        try backend.openOutputFile(at: temporary, .existing).synchronize()
    }

    /// Removes an upload's data, once ``take(_:owner:)`` or ``takeIdle(before:ownedBy:)`` has
    /// taken it (and with it its record).
    func remove(_ upload: Upload) {
        unlink(hostPath(of: upload.temporary))
    }

    /// Writes a resumable upload's record (whole or not at all: written aside, then renamed).
    func keep(_ upload: Upload, id: String) throws(CofferError) {
        guard upload.isResumable else { return }
        let record = ResumeRecord(data: upload.temporary.name, destination: upload.destination.description,
                                  conflict: upload.conflict, size: upload.expectedSize, boot: BootIdentity.current)
        let target = recordPath(of: id)
        do {
            let data = try JSONEncoder().encode(record)
            let aside = target + ".new"
            guard FileManager.default.createFile(atPath: aside, contents: data, attributes: [.posixPermissions: 0o600]),
                  rename(aside, target) == 0 else { throw CofferError.lastSystemError("write", path: upload.destination) }
        } catch let error as CofferError {
            throw error
        } catch {
            throw CofferError(.ioError, path: upload.destination, underlying: CofferError.wrapping(error))
        }
    }

    /// Finds resumable upload `id` again after a restart, for the session numbered `owner`
    /// that presents its id: known already, or read from its record. An upload begun before the
    /// machine restarted is dropped (its unsynced bytes may be lost).
    func revive(_ id: String, owner: Int?) {
        guard Self.isIdentifier(id), uploads.withLock({ $0[id] == nil }) else { return }
        let recordFile = recordPath(of: id)
        guard let data = FileManager.default.contents(atPath: recordFile),
              let record = try? JSONDecoder().decode(ResumeRecord.self, from: data),
              record.data.hasPrefix(Self.temporaryPrefix), !record.data.contains("/"),
              let destination = try? VirtualPath(parsing: record.destination) else { return }
        let temporary = VirtualPath.root(of: Self.mountName).appending(trustedName: record.data)
        var info = stat()
        guard record.boot != nil, record.boot == BootIdentity.current,
              lstat(hostPath(of: temporary), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              record.size.map({ Int64(info.st_size) <= $0 }) ?? true else {
            unlink(hostPath(of: temporary))
            unlink(recordFile)
            return
        }
        uploads.withLock { uploads in
            // Taken meanwhile (``take(_:owner:)`` unlinks the record under this lock): gone.
            guard uploads[id] == nil, access(recordFile, F_OK) == 0 else { return }
            uploads[id] = Upload(temporary: temporary, destination: destination, conflict: record.conflict,
                                 expectedSize: record.size, received: Int64(info.st_size), lastActivity: Date(),
                                 owner: owner, isResumable: true)
        }
    }

    /// Whether `text` is an id this registry hands out (a UUID's letters, digits and dashes).
    static func isIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.utf8.allSatisfy { $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
    private let uploads = Mutex<[String: Upload]>([:])
    static let mountName = "uploads"
    /// The names of uploads' data in the uploads folder.
    static let temporaryPrefix = "upload-"

    /// Uploads kept in the host folder at `path` (`Library/Caches/Downloading` in a standard
    /// container), their writes noted in `journal`.
    public init(path: String, journal: OperationJournal?) throws(CofferError) {
        backend = try LocalSandboxBackend(rootPath: path, syncBeforeCommit: false, journal: journal)
        self.path = path
    }

    /// How often abandoned uploads are looked for.
    static let sweepInterval: Duration = .seconds(60)

    /// Discards, every minute, the uploads that have had no data for an hour.
    public func keepUp(_ service: FileService) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.sweepInterval)
            await service.abortUploads(idleFor: FileService.uploadIdleLimit)
        }
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
            guard var upload = uploads[id], upload.isOwned(by: owner) else {
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
            guard let upload = uploads[id], upload.isOwned(by: owner) else { return nil }
            return upload
        }
        guard let found else { throw CofferError(.notFoundUpload, detail: id) }
        return (found.received, found.expectedSize, found.destination)
    }

    /// Removes an upload from the registry (for commit or abort), and a resumable one's
    /// record with it, so that nothing can revive it from here on.
    func take(_ id: String, owner: Int?) throws(CofferError) -> Upload {
        let upload = uploads.withLock { uploads -> Upload? in
            guard let upload = uploads[id], upload.isOwned(by: owner), !upload.isBusy else { return nil }
            uploads[id] = nil
            if upload.isResumable { unlink(recordPath(of: id)) }
            return upload
        }
        guard let upload else { throw CofferError(.notFoundUpload, detail: id) }
        return upload
    }

    /// Removes the uploads idle since before `cutoff` (all of them for `.distantFuture`) of
    /// one session (its resumable ones excepted), or of every session when `owner` is `nil`.
    func takeIdle(before cutoff: Date, ownedBy owner: Int? = nil) -> [(id: String, upload: Upload)] {
        uploads.withLock { uploads in
            let idle = uploads.filter { entry in
                !entry.value.isBusy && entry.value.lastActivity < cutoff
                    && (owner == nil || (entry.value.owner == owner && !entry.value.isResumable))
            }
            for (id, upload) in idle {
                uploads[id] = nil
                // As in `take`: gone from the registry and from its record at once.
                if upload.isResumable { unlink(recordPath(of: id)) }
            }
            return idle.map { (id: $0.key, upload: $0.value) }
        }
    }
}

extension FileService {
    /// How long an upload may go without data before it is removed.
    public static let uploadIdleLimit: TimeInterval = 60 * 60

    private func requireUploads() throws(CofferError) -> UploadRegistry {
        try require(UploadRegistry.self, "uploads")
    }

    /// The registry, with resumable upload `id` found again when a restart let go of it.
    private func requireUploads(reviving id: String, owner: Int?) throws(CofferError) -> UploadRegistry {
        let registry = try requireUploads()
        registry.revive(id, owner: owner)
        return registry
    }

    /// Starts an upload to `path` for the session numbered `owner`. Its folder must exist;
    /// with `.fail` the name must be free now (and is checked again at commit). `size`,
    /// when given, caps what may be appended.
    /// A `resumable` upload outlives its session and its process: its id is the capability to
    /// go on with it (``UploadRegistry``).
    func beginUpload(to path: VirtualPath, conflict: ConflictPolicy, size: Int64?,
                     owner: Int?, resumable: Bool = false) async throws(CofferError) -> String {
        let registry = try requireUploads()
        _ = try writableMount(for: path)
        guard let parent = path.parent else { throw CofferError(.isADirectory, path: path) }
        guard try await stat(parent).kind != .file else { throw CofferError(.notADirectory, path: parent) }
        if conflict == .fail, try await exists(path) { throw CofferError(.fileExists, path: path) }
        if let size, size < 0 { throw CofferError(.invalidArgument, path: path, detail: "negative size") }
        let temporary = VirtualPath.root(of: UploadRegistry.mountName).appending(trustedName: UploadRegistry.temporaryPrefix + UUID().uuidString)
        let upload = UploadRegistry.Upload(temporary: temporary, destination: path, conflict: conflict,
                                           expectedSize: size, lastActivity: Date(), owner: owner, isResumable: resumable)
        let id = try registry.add(upload)
        do {
            try await BlockingIO.run { _ throws(CofferError) in
                try registry.create(temporary)
                try registry.keep(upload, id: id)
            }
        } catch {
            if let taken = try? registry.take(id, owner: owner) { registry.remove(taken) }
            throw error.naming(path, insteadOf: UploadRegistry.mountName)
        }
        return id
    }

    /// How far upload `id` has come (a resumable upload asks before it goes on).
    /// A resumable upload begun before a restart is found again.
    func uploadStatus(_ id: String, owner: Int?) throws(CofferError) -> UploadStatus {
        let registry = try requireUploads(reviving: id, owner: owner)
        let (received, expected, destination) = try registry.status(id, owner: owner)
        return UploadStatus(received: received, expectedSize: expected, destination: destination)
    }

    /// Appends `bytes` at `offset`, which must be what was received so far. Returns the new total.
    func appendUpload(_ id: String, offset: Int64, bytes: [UInt8], owner: Int?) async throws(CofferError) -> Int64 {
        let registry = try requireUploads(reviving: id, owner: owner)
        let upload = try registry.claim(id, offset: offset, count: bytes.count, owner: owner)
        do {
            try await BlockingIO.run { _ throws(CofferError) in try registry.write(bytes, at: offset, to: upload.temporary) }
        } catch {
            registry.release(id, adding: 0)
            // A failed write leaves the upload in an unknown state: end it.
            if let broken = try? registry.take(id, owner: owner) { registry.remove(broken) }
            throw error.naming(upload.destination, insteadOf: UploadRegistry.mountName)
        }
        registry.release(id, adding: bytes.count)
        return upload.received + Int64(bytes.count)
    }

    /// Appends what `body` sends, as it arrives, from `offset` (what was received so far): read
    /// and written on one blocking-I/O thread, a MiB at a time, with no hop to another thread
    /// per piece. What arrived before the body was cut off (or the work was cancelled) is kept,
    /// for the next request to go on from. Returns the new total.
    func appendUpload(_ id: String, offset: Int64, from body: any IncomingBytes, owner: Int?) async throws(CofferError) -> Int64 {
        let registry = try requireUploads(reviving: id, owner: owner)
        return try await BlockingIO.run { flag throws(CofferError) -> Int64 in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: AppendUploadStream.pieceSize, alignment: 16)
            defer { buffer.deallocate() }
            var received = offset
            while true {
                var filled = 0
                var ended = false
                while filled < buffer.count {
                    let count = body.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                    if count <= 0 {
                        ended = true
                        break
                    }
                    filled += count
                }
                if filled > 0 {
                    let upload = try registry.claim(id, offset: received, count: filled, owner: owner)
                    do throws(CofferError) {
                        try registry.write(UnsafeRawBufferPointer(rebasing: buffer[..<filled]), at: received, to: upload.temporary)
                    } catch {
                        registry.release(id, adding: 0)
                        // A failed write leaves the upload in an unknown state: end it.
                        if let broken = try? registry.take(id, owner: owner) { registry.remove(broken) }
                        throw error.naming(upload.destination, insteadOf: UploadRegistry.mountName)
                    }
                    registry.release(id, adding: filled)
                    received += Int64(filled)
                }
                if ended || flag.isCancelled { return received }
            }
        }
    }

    /// Places a finished upload at its destination and returns the node.
    /// With `ifVersion`, a conditional save (``writeFile(_:bytes:conflict:ifVersion:)``).
    func commitUpload(_ id: String, owner: Int?, ifVersion: FileVersion? = nil) async throws(CofferError) -> FileNode {
        let registry = try requireUploads(reviving: id, owner: owner)
        let upload = try registry.take(id, owner: owner)
        // From here the upload is placed or gone, whatever happens: `take` removed its record.
        if let expected = upload.expectedSize, expected != upload.received {
            registry.remove(upload)
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
            registry.remove(upload)
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
                if let local = destinationBackend as? any AdoptingBackend,
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
    public var downloadsCachePath: String? { feature(UploadRegistry.self)?.path }

    /// Opens download data `cacheName` in the downloads cache (``downloadsCachePath``) to be
    /// written a piece at a time, made if it is not there: the cache's own backend writes it.
    /// - Throws: `invalidName` for a `cacheName` that is not a plain name there; `unsupported`
    ///   for a service without a downloads cache.
    public func openDownloadData(_ cacheName: String) throws(CofferError) -> any OutputFile {
        let registry = try requireUploads()
        try FileName.validate(cacheName)
        // Its errors name no path: the cache is no mount its user knows.
        return try registry.backend.openOutputFile(at: VirtualPath.root(of: UploadRegistry.mountName).appending(trustedName: cacheName),
                                                   .existingOrNew, namingPath: false)
    }

    /// An unnamed scratch file in the host folder `folder` (gone with its last reference),
    /// for a copy a library reads by descriptor (a remote file's, to preview it).
    public static func scratchFile(inFolder folder: String, for path: VirtualPath? = nil) throws(CofferError) -> any OutputFile {
        try HostOutputFile.unnamed(inFolder: folder, reporting: path)
    }

    /// Places a finished download — `cacheName`, a file in ``downloadsCachePath`` — in
    /// `folder` as `fileName`, under a new name when that one is taken (keep both), and
    /// removes it from the cache; when it cannot be placed, it stays there. The file appears
    /// only when complete.
    /// - Throws: `invalidName` for a `cacheName` that is not a plain name there.
    @_spi(Engine) public func placeDownload(_ cacheName: String, into folder: VirtualPath, as fileName: String,
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
        let registry = try requireUploads(reviving: id, owner: owner)
        registry.remove(try registry.take(id, owner: owner))
    }

    /// Discards uploads that have had no data for `idle` seconds; all of them with `nil`.
    /// Only the session numbered `owner`'s, when given (its end discards what it left open,
    /// but for its resumable uploads, which other sessions of its front end may go on with).
    /// Returns how many.
    @discardableResult
    @_spi(Engine) public func abortUploads(idleFor idle: TimeInterval?, ownedBy owner: Int? = nil) async -> Int {
        guard let registry = feature(UploadRegistry.self) else { return 0 }
        let cutoff = idle.map { Date().addingTimeInterval(-$0) } ?? .distantFuture
        let stale = registry.takeIdle(before: cutoff, ownedBy: owner)
        for (_, upload) in stale { registry.remove(upload) }
        return stale.count
    }
}
