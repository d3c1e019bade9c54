public import CofferCore
import CofferHTTP
import CofferRuntime
import Foundation
import Synchronization

/// Changing: folders, writes spooled and put at commit (in parts when big), moves, removal.
extension S3Backend {

    public func createFolder(at path: VirtualPath) async throws {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
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
    func requireFolder(_ folder: VirtualPath, for path: VirtualPath) throws(CofferError) {
        if folder.isRoot { return }
        if try client.head(key(folder)) != nil { throw CofferError(.notADirectory, path: folder) }
        guard try isFolder(folder) else { throw CofferError(.noSuchFile, path: path) }
    }

    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite {
        try await makeWrite(at: path, expecting: nil)
    }

    public func makeWrite(at path: VirtualPath, announcing expected: ExpectedWrite) async throws -> any PendingWrite {
        try await makeWrite(at: path, expecting: expected)
    }

    func makeWrite(at path: VirtualPath, expecting expected: ExpectedWrite?) async throws(CofferError) -> any PendingWrite {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> any PendingWrite in
            guard let parent = path.parent else { throw CofferError(.isADirectory, path: path) }
            self.sweepAbandonedUploads()
            try self.requireFolder(parent, for: path)
            // What is there now is what a replace may replace (`observed`): for a conditional
            // save, only the version that was read; the commit then carries its `If-Match`.
            let observed = try self.client.head(self.key(path))
            if let wanted = expected?.replacing, observed.flatMap({ FileVersion(token: $0.etag) }) != wanted {
                throw CofferError.changedSinceRead(path, now: observed.map { self.fileNode(path, $0) })
            }
            return try S3PendingWrite(backend: self, path: path, spoolFolder: self.spoolFolder, expected: expected,
                                      observed: observed)
        }
    }

    /// The `Content-Type` an object written at `path` gets.
    func contentType(for path: VirtualPath) -> String? {
        registry.type(withIdentifier: registry.typeIdentifier(forFileNamed: path.name))?.mimeTypes.first
    }

    /// Puts the spooled file at `path` under `conflict`'s rule: one PUT up to
    /// ``S3Transfers/multipartThreshold``, else an upload in parts read from the spool.
    func commit(_ spool: String, size: Int64, modified: Date?, metadata: [(name: String, value: String)] = [],
                at path: VirtualPath, conflict: ConflictPolicy, observed: S3Object?, cancel: CancellationFlag,
                started: S3PartSender? = nil) throws(CofferError) {
        let key = key(path)
        do throws(CofferError) {
            try commit(spool, key: key, size: size, modified: modified, metadata: metadata, at: path, conflict: conflict,
                       observed: observed, cancel: cancel, started: started)
        } catch {
            started?.drop(with: abandon)
            throw error
        }
    }

    func commit(_ spool: String, key: String, size: Int64, modified: Date?, metadata: [(name: String, value: String)],
                        at path: VirtualPath, conflict: ConflictPolicy, observed: S3Object?, cancel: CancellationFlag,
                        started: S3PartSender?) throws(CofferError) {
        let condition: S3WriteCondition
        if let existing = try client.head(key) {
            guard conflict.replaces else { throw CofferError(.fileExists, path: path) }
            // A replace replaces what was there when the write began: another writer's
            // version, committed meanwhile, is not silently lost.
            guard existing.etag == observed?.etag else { throw CofferError(.fileExists, path: path, detail: "s3-changed") }
            condition = .unchanged(etag: existing.etag)
        } else {
            if try isFolder(path) {
                guard conflict.replaces else { throw CofferError(.fileExists, path: path) }
                try removeSync(path)
            }
            condition = .absent
        }
        let fd = open(spool, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError(.ioError, path: path, detail: "the spooled write could not be read") }
        defer { close(fd) }
        let contentType = contentType(for: path)
        do throws(CofferError) {
            if let started {
                try uploadInParts(fd, size: size, to: key, contentType: contentType, modified: modified ?? Date(),
                                  metadata: metadata, condition: condition, cancel: cancel, started: started)
            } else if size <= transfers.multipartThreshold {
                try client.put(key, body: .file(descriptor: fd, offset: 0, length: size) { cancel.isCancelled },
                               contentType: contentType, modified: modified ?? Date(), metadata: metadata, condition: condition)
            } else {
                try uploadInParts(fd, size: size, to: key, contentType: contentType, modified: modified ?? Date(),
                                  metadata: metadata, condition: condition, cancel: cancel)
            }
        } catch where error.kind == .fileExists {
            // A replace refused: what it was to replace changed meanwhile (another writer).
            if case .unchanged = condition { throw CofferError(.fileExists, path: path, detail: "s3-changed") }
            throw CofferError(.fileExists, path: path)
        } catch {
            throw error.path == nil ? error.naming(path) : error
        }
    }

    /// Sends `size` bytes of `fd` as an upload in parts, ``S3Transfers/parallelParts`` at a
    /// time, or finishes the one a write started while it was written (`started`). Any
    /// failure or a cancel drops the upload; one left by a killed process is in the ledger
    /// and dropped by the next process that writes to the bucket.
    func uploadInParts(_ fd: Int32, size: Int64, to key: String, contentType: String?, modified: Date,
                               metadata: [(name: String, value: String)], condition: S3WriteCondition, cancel: CancellationFlag,
                               started: S3PartSender? = nil) throws(CofferError) {
        let sender: S3PartSender
        if let started { sender = started } else {
            sender = try startParts(fd, key: key, contentType: contentType, modified: modified, metadata: metadata, size: size)
        }
        sender.stop(when: cancel)
        let upload = sender.upload
        do throws(CofferError) {
            let etags = try sender.finish(size: size)
            try cancel.check(nil)
            // Ceph RGW 16.2 finishes an upload whatever its conditions say (checked), so they
            // are checked here too, just before; AWS checks them itself.
            try client.check(condition, at: key)
            try client.finish(upload, parts: etags, condition: condition)
            ledger?.ended(upload)
        } catch {
            sender.drop(with: abandon)
            throw error
        }
    }

    /// Starts an upload in parts of a file of about `size` bytes, noted in the ledger.
    func startParts(_ fd: Int32, key: String, contentType: String?, modified: Date,
                    metadata: [(name: String, value: String)], size: Int64) throws(CofferError) -> S3PartSender {
        let upload = try client.startUpload(key, contentType: contentType, modified: modified, metadata: metadata)
        ledger?.started(upload)
        return S3PartSender(client: client, upload: upload, descriptor: fd, partSize: transfers.partSize(for: size),
                            parallel: transfers.parallelParts)
    }

    /// Drops an upload in parts (kept in the ledger when the server cannot be told).
    func abandon(_ upload: S3Upload) {
        if (try? client.abandon(upload)) != nil { ledger?.ended(upload) }
    }

    /// Drops, once per backend and in the background, the uploads in parts that killed
    /// processes of this container left in the bucket.
    func sweepAbandonedUploads() {
        guard let ledger, swept.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let client = client
        Thread.detachNewThread {
            ledger.recover { upload throws(CofferError) in try client.abandon(upload) }
        }
    }

    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            guard !source.isRoot, !destination.isRoot else { throw CofferError(.invalidOperation, path: source) }
            guard source != destination else { return }
            guard !source.contains(destination) else { throw CofferError(.invalidOperation, path: destination) }
            let moving = try self.nodeSync(source)
            try self.requireFolder(destination.parent!, for: destination)
            if (try? self.nodeSync(destination)) != nil {
                guard conflict.replaces else { throw CofferError(.fileExists, path: destination) }
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
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.removeSync(path) }
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

    func fileNode(_ path: VirtualPath, _ object: S3Object) -> FileNode {
        FileNode(path: path, kind: .file, size: object.size, modificationDate: object.modified,
                 isHidden: FileNode.isDotName(path.name), typeIdentifier: registry.typeIdentifier(forFileNamed: path.name),
                 version: FileVersion(token: object.etag))
    }

    func folderNode(_ path: VirtualPath) -> FileNode {
        let type = path.isRoot ? FileType.Identifier.folder : registry.typeIdentifier(forFolderNamed: path.name)
        return FileNode(path: path, kind: type == FileType.Identifier.folder ? .folder : .package, size: 0,
                        modificationDate: .distantPast, isHidden: FileNode.isDotName(path.name), typeIdentifier: type)
    }

}
