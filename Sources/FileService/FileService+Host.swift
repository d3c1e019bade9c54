import CofferBackends
@_spi(Engine) public import CofferCore
import CofferRuntime
import Foundation

/// The host bridge: copies in, copies out, and files opened where they are (seeds 001–003).
extension FileService {
    /// An item just imported, as reported when it cannot be read back.
    private func imported(_ item: HostItem, at path: VirtualPath) -> FileNode {
        guard item.isFolder else { return writtenFile(path, size: Int(item.size)) }
        return FileNode(path: path, kind: .folder, modificationDate: item.modificationDate,
                        isHidden: FileNode.isDotName(path.name), typeIdentifier: registry.typeIdentifier(forFolderNamed: path.name))
    }

    /// Where imports go when the caller names no folder: `files:/Import`.
    public static let defaultImportFolder = VirtualPath.root().appending(trustedName: "Import")

    // MARK: Import

    /// Copies host files and folders into `folder` (`files:/Import` is created when missing).
    ///
    /// Each item lands atomically under its own name, or with `.keepBoth` the
    /// first free variant of it; the host side is never changed. Every item gets a result
    /// and one failure does not stop the others. `allowedTypes` admits items by conformance,
    /// judged by their content as well as their name. Progress covers all items together.
    /// Host paths are opened through `policy`, the session's.
    ///
    /// - Throws: only for the destination folder itself (missing, not a folder, read-only).
    func importItems(hostPaths: [String], into folder: VirtualPath, allowedTypes: [String], conflict: ConflictPolicy,
                     policy: HostAccessPolicy, progress: ProgressReporter) async throws(CofferError) -> [ImportResult] {
        let backend = try writableMount(for: folder).backend
        try requireKnownTypes(allowedTypes)
        if folder == Self.defaultImportFolder { try await createFolder(at: folder, intermediates: true) }
        guard try await stat(folder).kind != .file else { throw CofferError(.notADirectory, path: folder) }

        let importer = HostImporter(policy: policy, registry: registry, allowedTypes: allowedTypes, progress: progress)
        var results: [ImportResult] = []
        var ready: [(index: Int, item: HostItem)] = []
        for hostPath in hostPaths {
            do throws(CofferError) {
                let item = try await BlockingIO.run { _ throws(CofferError) in
                    let item = try policy.open(hostPath)
                    try importer.checkType(of: item)
                    return item
                }
                ready.append((results.count, item))
                results.append(ImportResult(hostPath: hostPath, outcome: .failure(CofferError(.cancelled)), skipped: []))
            } catch {
                results.append(ImportResult(hostPath: hostPath, outcome: .failure(error), skipped: []))
            }
        }
        for (_, item) in ready {
            let (bytes, items) = await importer.measure(item)
            progress.expect(bytes: bytes, items: items)
        }
        for (index, item) in ready {
            if Task.isCancelled { results[index].outcome = .failure(CofferError(.cancelled)); continue }
            do throws(CofferError) {
                let target = try folder.appending(item.name)
                var skipped: [ImportSkip] = []
                let arriving = Arrival(isFolder: item.isFolder, movesSource: false)
                let placed = try await settle(target, conflict: conflict, arriving: arriving) { destination, policy in
                    skipped = try await importer.copy(item, to: backend, at: destination, conflict: policy)
                }
                results[index].skipped = skipped
                results[index].outcome = .success(await placedNode(placed, made: imported(item, at: placed)))
            } catch {
                results[index].outcome = .failure(error)
            }
        }
        return results
    }

    // MARK: Export

    /// Copies an item out to a host folder and returns the host path it was written to.
    ///
    /// The item is first copied into a fresh stage in `staging:`, then from there into the
    /// host folder, and the stage is removed (seed 000 §5.6). It is never moved: the sandbox
    /// copy stays. With `.keepBoth` an existing host item keeps its name; a replace moves it
    /// to the user's desktop trash (``HostTrash``), never deleting it.
    ///
    /// With `encoding`, a text file is written in that encoding (its line endings kept); a
    /// file that is not text, or text with a character the encoding cannot hold, is refused.
    func exportItem(_ path: VirtualPath, toHostDirectory hostDirectory: String, conflict: ConflictPolicy,
                    encoding: TextForm? = nil, policy: HostAccessPolicy,
                    progress: ProgressReporter) async throws(CofferError) -> String {
        guard let staging = stagingBackend else { throw CofferError(.unsupported, path: path) }
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        let source = try mount(for: path).backend
        let node = try await stat(path)
        var converted: [UInt8]?
        if let encoding { converted = try await transcoded(node, to: encoding) }
        let folder = try await BlockingIO.run { _ throws(CofferError) in try policy.open(hostDirectory) }
        guard folder.isFolder else { throw CofferError(.notADirectory, detail: folder.name) }

        let stage = try await staging.makeStage()
        do {
            // Both halves count: the copy into the stage and the copy out of it.
            let (bytes, items) = try await StreamingCopy.measure(source, node)
            progress.expect(bytes: bytes, items: items)
            let staged = stage.appending(trustedName: path.name)
            if let converted {
                try await Self.write(converted, to: staging, at: staged, modified: node.knownModificationDate)
                if let source = source as? any AttributeKeepingBackend,
                   let attributes = try? await source.userAttributes(at: path) {
                    // The text changed its encoding, not what the file is: its tags go with it.
                    OperationWarnings.report(attributesOf: path.description, lost: await staging.keep(attributes, at: staged))
                }
                progress.advance(bytes: Int64(converted.count), items: 1)
            } else {
                try await stageCopy(of: path, from: source, to: staging, at: staged, progress: progress)
            }
            let (hostPath, trashed) = try await staging.deliver(staged, exporting: path, to: folder, conflict: conflict, trash: host.trash,
                                                                progress: progress)
            if let trashed { ReplacedItems.current?.add("desktop:" + trashed) }
            try? await staging.removeStage(stage)
            return hostPath
        } catch {
            try? await staging.removeStage(stage)
            throw CofferError.wrapping(error, path: path).naming(path, insteadOf: staging.mountName)
        }
    }

    /// Copies the item at `path` of `source` to `staged` in the staging mount: in the kernel,
    /// with its attributes, from a local mount; streamed from any other.
    func stageCopy(of path: VirtualPath, from source: any StorageBackend, to staging: ExportStagingBackend,
                   at staged: VirtualPath, progress: ProgressReporter) async throws(CofferError) {
        if try await !staging.stage(path, of: source, at: staged, progress: progress) {
            try await call(path) {
                try await StreamingCopy.copy(from: source, at: path, to: staging, at: staged, conflict: .fail, progress: progress)
            }
        }
    }

    /// The text of the file `node` in `form`.
    private func transcoded(_ node: FileNode, to form: TextForm) async throws(CofferError) -> [UInt8] {
        try node.requireReadableFile()
        guard node.size <= Self.editLimit else { throw CofferError(.tooLarge, path: node.path, detail: "\(Self.editLimit) bytes") }
        let bytes = try await readBytes(node.path, offset: 0, length: Int(node.size) + 1).bytes
        guard let current = bytes.isEmpty ? .utf8 : TextForm(of: bytes, isComplete: true) else {
            throw CofferError(.unsupported, path: node.path, detail: "not-text")
        }
        var decoder = StreamingTextDecoder(charset: current.charset)
        let text = decoder.decode(bytes.dropFirst(current.byteOrderMarkLength), isFinal: true)
        return try form.encode(text, path: node.path)
    }

    /// Writes `bytes` as a new file at `path` of `backend`, dated `modified`.
    private static func write(_ bytes: [UInt8], to backend: any StorageBackend, at path: VirtualPath,
                              modified: Date?) async throws(CofferError) {
        do {
            let writer = try await backend.makeWrite(at: path)
            do {
                try await writer.write(bytes)
                try await writer.setAttributes(permissions: nil, modificationDate: modified)
                try await writer.commit(conflict: .fail)
            } catch {
                await writer.abort()
                throw error
            }
        } catch {
            throw CofferError.wrapping(error, path: path)
        }
    }

    // MARK: Open in place

    /// Opens a host file where it is, without copying it, and remembers it as a bookmark
    /// (the same file opened again keeps its bookmark).
    func open(hostPath: String, policy: HostAccessPolicy) async throws(CofferError) -> OpenedHostFile {
        let registry = self.registry
        return try await updatingBookmarks(policy) { bookmarks, policy throws(CofferError) in
            let item = try policy.open(hostPath)
            guard !item.isFolder else { throw CofferError(.isADirectory, detail: item.name) }
            let bookmark: HostBookmark
            if let index = bookmarks.firstIndex(where: { $0.identifies(item) || $0.hostPath == item.path }) {
                bookmark = HostBookmark(id: bookmarks[index].id, item: item, createdAt: bookmarks[index].createdAt,
                                        openedAs: hostPath)
                bookmarks[index] = bookmark
            } else {
                bookmark = HostBookmark(id: (bookmarks.map(\.id).max() ?? 0) + 1, item: item, openedAs: hostPath)
                bookmarks.append(bookmark)
            }
            return OpenedHostFile(bookmark: bookmark, type: item.assessedType(in: registry), version: item.version)
        }
    }

    /// Every bookmark, checked: files renamed within their folder are found again (and the
    /// bookmark updated); deleted or replaced ones are reported stale.
    func bookmarks(policy: HostAccessPolicy) async throws(CofferError) -> [BookmarkStatus] {
        try await updatingBookmarks(policy) { bookmarks, policy in
            bookmarks.indices.map { index in
                do throws(CofferError) {
                    let item = try bookmarks[index].locate(using: policy)
                    bookmarks[index] = bookmarks[index].updated(with: item)
                    return BookmarkStatus(bookmark: bookmarks[index], problem: nil)
                } catch {
                    return BookmarkStatus(bookmark: bookmarks[index], problem: error)
                }
            }
        }
    }

    /// Forgets a bookmark. The host file is not touched.
    func removeBookmark(_ id: Int) async throws(CofferError) {
        try await updatingBookmarks(.nowhere) { bookmarks, _ throws(CofferError) in
            guard let index = bookmarks.firstIndex(where: { $0.id == id }) else {
                throw CofferError(.noSuchFile, detail: "bookmark \(id)")
            }
            bookmarks.remove(at: index)
        }
    }

    /// Runs `body` with access to the bookmarked file, and ends the access when `body`
    /// returns or throws: start and stop are paired by construction (seed 003 §2.2).
    /// The body runs on the caller's actor (`nonisolated(nonsending)`), so it may use the
    /// caller's state.
    ///
    /// - Throws: `staleBookmark` when the file was deleted or replaced; `noSuchFile` for an
    ///   unknown bookmark; whatever `body` throws, as a `CofferError`.
    nonisolated(nonsending) func withAccess<T>(
        to bookmarkID: Int, policy: HostAccessPolicy, _ body: (any HostFileReading) async throws -> T
    ) async throws(CofferError) -> T {
        let (bookmark, item) = try await updatingBookmarks(policy) { bookmarks, policy throws(CofferError) in
            guard let index = bookmarks.firstIndex(where: { $0.id == bookmarkID }) else {
                throw CofferError(.noSuchFile, detail: "bookmark \(bookmarkID)")
            }
            let item = try bookmarks[index].locate(using: policy)
            bookmarks[index] = bookmarks[index].updated(with: item)
            return (bookmarks[index], item)
        }
        do {
            return try await bookmark.withAccess(to: item) { access in try await body(access) }
        } catch {
            throw CofferError.wrapping(error)
        }
    }

    /// Loads the bookmarks, lets `change` edit them, and saves them if it did, all off the
    /// cooperative pool (it touches the host's file system).
    func updatingBookmarks<T: Sendable>(
        _ policy: HostAccessPolicy, _ change: @escaping @Sendable (inout [HostBookmark], HostAccessPolicy) throws(CofferError) -> T
    ) async throws(CofferError) -> T {
        let store = try requireBookmarkStore()
        return try await BlockingIO.run { _ throws(CofferError) in
            try store.update { bookmarks throws(CofferError) in try change(&bookmarks, policy) }
        }
    }

    private func requireBookmarkStore() throws(CofferError) -> BookmarkStore {
        guard let bookmarkStore else { throw CofferError(.unsupported, detail: "bookmarks") }
        return bookmarkStore
    }

    /// What a host item is: a folder (or package), and its type by name and — for files —
    /// by content, opened through `policy`.
    func assessHostItem(_ hostPath: String, policy: HostAccessPolicy) async throws(CofferError) -> (isFolder: Bool, type: TypeAssessment) {
        let registry = self.registry
        return try await BlockingIO.run { _ throws(CofferError) in
            let item = try policy.open(hostPath)
            return (item.isFolder, item.assessedType(in: registry))
        }
    }

    // MARK: Content

    /// The type of a file by its name and by its content (declared rules, then libmagic), for `info`.
    /// Folders are judged by name only.
    @_spi(Engine) public func assessType(_ path: VirtualPath) async throws(CofferError) -> TypeAssessment {
        let node = try await stat(path)
        guard node.kind == .file, node.special == nil else {
            return TypeAssessment(byName: node.typeIdentifier)
        }
        let sample = try await readBytes(path, length: ContentSniffer.sampleSize(for: registry)).bytes
        return registry.assess(fileNamed: node.name, contentMIMEType: ContentSniffer.shared.mimeType(of: sample, registry: registry))
    }

    /// Opens a sandbox file as text, detecting its encoding.
    @_spi(Engine) public func openText(_ path: VirtualPath) async throws(CofferError) -> TextReader {
        let backend = try mount(for: path).backend
        let file: any ReadableFile
        do { file = try await backend.openFile(at: path) } catch { throw CofferError.wrapping(error, path: path) }
        return try await TextReader(path: path) { try await file.read(upTo: 1 << 20) }
    }

    /// Opens a bookmarked host file as text, for the duration of `body`.
    nonisolated(nonsending) func withText<T>(
        ofBookmark bookmarkID: Int, policy: HostAccessPolicy, _ body: (TextReader) async throws -> T
    ) async throws(CofferError) -> T {
        try await withAccess(to: bookmarkID, policy: policy) { access in
            var offset: Int64 = 0
            let reader = try await TextReader(path: nil) {
                let chunk = try await access.read(offset: offset, length: 1 << 20)
                offset += Int64(chunk.count)
                return chunk
            }
            return try await body(reader)
        }
    }
}

