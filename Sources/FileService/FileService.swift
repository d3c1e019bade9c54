import CofferDesktop
public import CofferBackends
@_spi(Engine) public import CofferCore
import CofferSearch
import Foundation
import Synchronization

/// The one entry point for every file operation, over a set of mounts.
///
/// Front ends open a ``Session`` on the service and perform operations in it
/// (``FileOperation`` values: ``CopyItem``, ``TrashItems``…), which decide what a request
/// means — its defaults, where an item lands, what the audit log records. The methods here
/// are the engine those operations run on: they take every choice as an argument and
/// decide the mechanics once for every backend — which mount, whether it may change, how
/// "keep both" finds a free name, how a copy crosses mounts. Backends do the I/O off
/// Swift's cooperative pool; cancellation is Swift task cancellation, and a cancelled copy
/// or move leaves nothing half-done.
///
/// The service keeps no mutable state of its own — what changes lives in its backends and
/// its features, each guarding itself — so it is a `Sendable` class rather than an actor,
/// and nothing queues behind anything: every call runs at once on the caller's task.
public final class FileService: Sendable {
    /// The mounts by name, fixed when the service is made.
    public let mounts: [Mount]
    private let mountsByName: [String: Mount]
    /// The mounts whose storage answers metadata at once, cast once here rather than per `stat`.
    private let immediateBackends: [String: any ImmediateMetadata]
    /// Where `trash(_:)` puts items; `nil` when the service has no trash.
    let trashBackend: TrashBackend?
    /// Where exports are staged; `nil` when the service has none.
    let stagingBackend: ExportStagingBackend?
    /// The types the service knows: the system's plus the application's manifest.
    public let registry: TypeRegistry
    /// How the service meets this computer: closed host folders, bookmarks, the desktop's
    /// trash, drafts.
    let host: HostSettings
    /// Host folders no session may use, whatever its ``HostAccess`` (the container).
    var excludedHostFolders: [String] { host.excludedFolders }
    /// Where bookmarks of files opened in place are kept; `nil` keeps none.
    let bookmarkStore: BookmarkStore?
    /// What the composition root added to the engine (``ServiceFeature``).
    public let features: ServiceFeatures
    /// Background work kept going while long-lived sessions are open.
    let housekeeping = Housekeeping()
    /// Numbers sessions, for their activities and uploads.
    let sessionNumbers = Atomic<Int>(0)

    /// A service over `mounts`. Mount names must be unique. A trash or staging backend
    /// given here should also be among the mounts, to be browsable.
    ///
    /// Which host paths a session may use is the session's (``SessionOptions/hostAccess``);
    /// `host` closes some to all of them, and says where bookmarks and drafts are kept.
    /// `features` are the capabilities the service has beyond its mounts (an audit log, a
    /// search index, uploads…); a service without one answers what needs it `unsupported`.
    public init(mounts: [Mount], trash: TrashBackend? = nil, staging: ExportStagingBackend? = nil,
                registry: TypeRegistry = .standard, host: HostSettings = HostSettings(),
                features: [any ServiceFeature] = []) {
        self.mounts = mounts
        self.mountsByName = Dictionary(mounts.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.immediateBackends = mountsByName.compactMapValues { $0.backend as? any ImmediateMetadata }
        self.trashBackend = trash
        self.stagingBackend = staging
        self.registry = registry
        self.host = host
        self.bookmarkStore = host.bookmarksPath.map(BookmarkStore.init(path:))
        self.features = ServiceFeatures(features)
    }

    /// The mounts whose items have host paths (the local sandbox's), by name: what names a
    /// local item by its `file://` URI.
    @_spi(Engine) public var hostPathNaming: [String: any HostPathNaming] {
        Dictionary(uniqueKeysWithValues: mounts.compactMap { mount in
            (mount.backend as? any HostPathNaming).map { (mount.name, $0) }
        })
    }

    /// The mount named in `path`.
    @_spi(Engine) public func mount(for path: VirtualPath) throws(CofferError) -> Mount {
        guard let mount = mountsByName[path.mount] else {
            throw CofferError(.unknownMount, path: nil, detail: path.mount)
        }
        return mount
    }

    /// Refuses type identifiers the registry does not know (a filter by them would match nothing).
    func requireKnownTypes(_ types: [String]) throws(CofferError) {
        for type in types where registry.type(withIdentifier: type) == nil {
            throw CofferError(.invalidArgument, detail: "unknown type \(type)")
        }
    }

    func writableMount(for path: VirtualPath) throws(CofferError) -> Mount {
        let mount = try mount(for: path)
        guard mount.isWritable else { throw CofferError(.readOnly, path: path) }
        return mount
    }

    // MARK: Reading

    /// One page of a folder's items, sorted.
    @_spi(Engine) public func list(_ path: VirtualPath, options: ListOptions = ListOptions()) async throws(CofferError) -> ListPage {
        let backend = try mount(for: path).backend
        let all = try await self.call(path) {
            try await backend.contentsOfFolder(at: path, readingBackupExclusion: options.readsBackupExclusion)
        }
        // Sorted as indices and copied once, for the page only: nodes are large to copy.
        let order = all.sortedIndices(by: options.order, including: { options.includeHidden || !$0.isHidden })
        let start = min(max(0, options.offset), order.count)
        let end = options.limit.map { min(order.count, start + max(0, $0)) } ?? order.count
        return ListPage(items: order[start..<end].map { all[$0] }, offset: start, total: order.count)
    }

    /// The item at `path`.
    @_spi(Engine) public func stat(_ path: VirtualPath) async throws(CofferError) -> FileNode {
        let backend = try mount(for: path).backend
        return try await self.call(path) { try await backend.node(at: path) }
    }

    /// The item at `path`, read at once on this thread where the mount's backend can
    /// (``ImmediateMetadata``); `nil` where it cannot, to be read with ``stat(_:)``.
    @_spi(Engine) public func statImmediately(_ path: VirtualPath) throws(CofferError) -> FileNode? {
        guard let backend = immediateBackends[path.mount] else {
            _ = try mount(for: path)  // an unknown mount is an error, as for `stat`
            return nil
        }
        return try backend.nodeImmediately(at: path)
    }

    /// What an operation that has just placed an item reports: the item as it is now or, when
    /// it is gone again already (another process moved it away at once), the item as the
    /// operation left it. The operation succeeded either way; an answer of "no such file"
    /// would tell the caller it had not.
    @_spi(Engine) public func placedNode(_ path: VirtualPath, made: FileNode) async -> FileNode {
        do {
            return try await stat(path)
        } catch {
            var node = made
            node.path = path
            return node
        }
    }

    /// A file just written with `size` bytes, as reported when it cannot be read back.
    func writtenFile(_ path: VirtualPath, size: Int) -> FileNode {
        FileNode(path: path, kind: .file, size: Int64(size), modificationDate: Date(),
                 isHidden: FileNode.isDotName(path.name), typeIdentifier: registry.typeIdentifier(forFileNamed: path.name))
    }

    /// Whether something exists at `path`.
    @_spi(Engine) public func exists(_ path: VirtualPath) async throws(CofferError) -> Bool {
        do {
            _ = try await stat(path)
            return true
        } catch where error.kind == .noSuchFile {
            return false
        }
    }

    /// Total size and counts below `path` (hidden items included; links not followed).
    @_spi(Engine) public func diskUsage(_ path: VirtualPath) async throws(CofferError) -> DiskUsage {
        let node = try await stat(path)
        var usage = DiskUsage()
        if node.kind == .file {
            usage.bytes = node.size
            usage.files = node.special == nil ? 1 : 0
            return usage
        }
        let walk = try await WalkTree(path, includeHidden: true).start(in: self, limit: nil)
        _ = try await walk.visit { entry in
            guard let child = entry.node else {
                usage.unreadable.append(entry.error ?? CofferError(.noPermission, path: entry.path))
                return
            }
            if child.kind == .file { usage.bytes += child.size; usage.files += 1 } else { usage.folders += 1 }
        }
        return usage
    }

    // MARK: Changing

    /// Creates a folder. With `intermediates`, missing parents are created and an existing
    /// folder is not an error (like `mkdir -p`).
    @discardableResult
    @_spi(Engine) public func createFolder(at path: VirtualPath, intermediates: Bool = false) async throws(CofferError) -> FileNode {
        let backend = try writableMount(for: path).backend
        guard !path.isRoot else {
            if intermediates { return try await stat(path) }
            throw CofferError(.fileExists, path: path)
        }
        if intermediates {
            // Only the folders made here are new to the index; the rest were there.
            var created: [VirtualPath] = []
            func makeEach() async throws(CofferError) {
                var current = VirtualPath.root(of: path.mount)
                for name in path.components {
                    current = current.appending(trustedName: name)
                    do {
                        try await backend.createFolder(at: current)
                        created.append(current)
                    } catch let error as CofferError where error.kind == .fileExists {
                        let existing = try await stat(current)
                        guard existing.kind != .file else { throw CofferError(.notADirectory, path: current) }
                    } catch {
                        throw CofferError.wrapping(error, path: current)
                    }
                }
            }
            do {
                try await makeEach()
            } catch {
                await indexChanged(created)
                for folder in created { ReplacedItems.current?.note(ChangeDraft(kind: .folder, path: folder)) }
                throw CofferError.wrapping(error, path: path)
            }
            await indexChanged(created)
            for folder in created { ReplacedItems.current?.note(ChangeDraft(kind: .folder, path: folder)) }
        } else {
            do {
                try await self.call(path) { try await backend.createFolder(at: path) }
            } catch {
                throw await blamingTheWay(error, to: path)
            }
            await indexChanged([path])
            ReplacedItems.current?.note(ChangeDraft(kind: .folder, path: path))
        }
        return try await stat(path)
    }

    /// A failure to make the item at `path` because a folder on its way is missing, or is not
    /// a folder, names that folder: `mkdir nope/child` says “files:/nope” doesn't exist. (A
    /// backend names what it was asked for, as its contract says; which part of the way is at
    /// fault is decided here, once.)
    func blamingTheWay(_ failure: CofferError, to path: VirtualPath) async -> CofferError {
        guard failure.kind == .noSuchFile || failure.kind == .notADirectory, failure.path == path,
              let parent = path.parent, !parent.isRoot else { return failure }
        var current = VirtualPath.root(of: path.mount)
        for name in parent.components {
            current = current.appending(trustedName: name)
            do {
                if try await stat(current).kind == .file { return CofferError(.notADirectory, path: current) }
            } catch where error.kind == .noSuchFile {
                return CofferError(.noSuchFile, path: current)
            } catch {
                return failure
            }
        }
        return failure
    }

    /// Gives an item a new name in the same folder.
    @discardableResult
    @_spi(Engine) public func rename(_ path: VirtualPath, to newName: String,
                       conflict: ConflictPolicy) async throws(CofferError) -> VirtualPath {
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        let destination = try path.replacingName(with: newName)
        return try await move(path, to: destination, conflict: conflict)
    }

    /// Moves an item to exactly `destination`, across mounts if needed.
    ///
    /// Within a mount this is a rename. Across mounts the item is copied, and the source is
    /// removed only once the copy is complete and in place.
    @discardableResult
    @_spi(Engine) public func move(_ source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy,
                     progress: ProgressReporter = .none) async throws(CofferError) -> VirtualPath {
        let sourceMount = try writableMount(for: source)
        let destinationMount = try writableMount(for: destination)
        try Self.checkTransfer(source, to: destination)
        if source == destination { return destination }
        let moving = try await stat(source)
        let placed = try await settle(destination, conflict: conflict, arriving: Arrival(moving, moved: true),
                                      journaling: ChangeDraft(kind: .move, path: destination, source: source)) { target, policy in
            if sourceMount.name == destinationMount.name {
                try await sourceMount.backend.moveItem(at: source, to: target, conflict: policy)
            } else {
                try await StreamingCopy.copy(from: sourceMount.backend, at: source, to: destinationMount.backend,
                                             at: target, conflict: policy, progress: progress)
                try await sourceMount.backend.removeItem(at: source)
            }
        }
        await indexChanged([source])
        await noteMoved(from: source, to: placed)
        return placed
    }

    /// Copies an item to exactly `destination`, across mounts if needed.
    @discardableResult
    @_spi(Engine) public func copy(_ source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy,
                     progress: ProgressReporter = .none) async throws(CofferError) -> VirtualPath {
        let sourceMount = try mount(for: source)
        let destinationMount = try writableMount(for: destination)
        try Self.checkTransfer(source, to: destination)
        if source == destination && conflict != .keepBoth { throw CofferError(.fileExists, path: destination) }
        let copied = try await stat(source)
        return try await settle(destination, conflict: conflict, arriving: Arrival(copied)) { target, policy in
            if sourceMount.name == destinationMount.name {
                try await sourceMount.backend.copyItem(at: source, to: target, conflict: policy, progress: progress)
            } else {
                try await StreamingCopy.copy(from: sourceMount.backend, at: source, to: destinationMount.backend,
                                             at: target, conflict: policy, progress: progress)
            }
        }
    }

    /// Refuses transfers that make no sense: a mount's root, or a folder into itself.
    private static func checkTransfer(_ source: VirtualPath, to destination: VirtualPath) throws(CofferError) {
        guard !source.isRoot, !destination.isRoot else { throw CofferError(.invalidOperation, path: source) }
        if source != destination && source.contains(destination) {
            throw CofferError(.invalidOperation, path: source, detail: "into-itself")
        }
    }

    /// Runs `operation` at `destination` under `conflict`, settling "keep both" and
    /// "replace" here, once for every backend.
    ///
    /// Backends are only ever asked to `fail` on a name taken. For `keepBoth` the service
    /// picks the first free name (`x (2).pdf`, `x (3).pdf`…) and asks with `fail`; if
    /// another process took that name meanwhile, it tries the next one. A replace moves the
    /// item in the way to the trash (``replacing(_:with:policy:_:)``). Every operation that
    /// puts an item somewhere goes through here, so here is where the search index hears of it.
    ///
    /// - Parameter arriving: what the operation puts there, so that a replace can tell a
    ///   folder from a file.
    ///   - change: how the session's journal notes the placing (a ``JournalChange/Kind/create``
    ///     unless said otherwise), with what a replace displaced.
    func settle(_ destination: VirtualPath, conflict: ConflictPolicy, arriving: Arrival,
                expecting version: FileVersion? = nil, journaling change: ChangeDraft? = nil,
                _ operation: (VirtualPath, ConflictPolicy) async throws -> Void) async throws(CofferError) -> VirtualPath {
        let placed = try await place(destination, conflict: conflict, arriving: arriving, expecting: version, operation)
        if let journal = ReplacedItems.current {
            var change = change ?? ChangeDraft(kind: .create, path: placed)
            change.path = placed
            if !arriving.isFolder { change.state = (try? await stat(placed))?.version?.description }
            journal.note(change)
        }
        return placed
    }

    private func place(_ destination: VirtualPath, conflict: ConflictPolicy, arriving: Arrival,
                       expecting version: FileVersion? = nil,
                       _ operation: (VirtualPath, ConflictPolicy) async throws -> Void) async throws(CofferError) -> VirtualPath {
        // A conditional save replaces the version it names, and nothing else.
        if let version { return try await replacing(destination, with: arriving, policy: .replace, expecting: version, operation) }
        switch conflict {
        case .fail:
            // A taken name is found before anything is sent (a conflict question on a bucket came
            // after 97 % of an upload); the operation still refuses it at its commit, for a name
            // taken meanwhile.
            if try await exists(destination) { throw CofferError(.fileExists, path: destination) }
            try await self.call(destination) { try await operation(destination, .fail) }
            await indexChanged([destination])
            return destination
        case .replace, .replaceFolder:
            return try await replacing(destination, with: arriving, policy: conflict, operation)
        case .keepBoth:
            break
        }
        let placed = try await UniqueName.claim(destination.name) { name async throws(CofferError) -> VirtualPath? in
            let candidate = try destination.replacingName(with: name)
            guard try await !exists(candidate) else { return nil }
            do {
                try await operation(candidate, .fail)
                return candidate
            } catch let error as CofferError where error.kind == .fileExists {
                return nil  // taken between the check and the operation: try the next name
            } catch {
                throw CofferError.wrapping(error, path: candidate)
            }
        }
        guard let placed else { throw CofferError(.fileExists, path: destination) }
        await indexChanged([placed])
        return placed
    }

    /// Awaits a backend call, turning whatever it throws into a `CofferError` about `path`.
    /// A cancelled task gets ``CofferError/Kind/cancelled`` before anything starts, so a
    /// command walking many folders stops at the next one.
    nonisolated(nonsending) func call<T>(_ path: VirtualPath, _ body: () async throws -> T) async throws(CofferError) -> T {
        if Task.isCancelled { throw CofferError(.cancelled, path: path) }
        do {
            return try await body()
        } catch {
            throw CofferError.wrapping(error, path: path)
        }
    }
}
