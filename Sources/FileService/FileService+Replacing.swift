import CofferBackends
@_spi(Engine) import CofferCore
import Synchronization

/// What an operation puts at a destination, as far as a replace needs to know.
struct Arrival: Sendable {
    /// A folder (or package) rather than a file.
    var isFolder: Bool
    /// Whether the item is moved there (its source goes away) rather than made anew.
    var movesSource: Bool

    static let file = Arrival(isFolder: false, movesSource: false)

    /// A copy of `node`, or `node` itself when `moved`.
    init(_ node: FileNode, moved: Bool = false) {
        self.init(isFolder: node.kind != .file, movesSource: moved)
    }

    init(isFolder: Bool, movesSource: Bool) {
        self.isFolder = isFolder
        self.movesSource = movesSource
    }
}

/// The items the replaces of one operation moved to a trash, for its audit entry: their
/// trash IDs, and `desktop:ID` for what went to the user's desktop trash.
///
/// ``Session/perform(_:progress:)`` sets one for the operation it runs; the engine adds to
/// it whatever a replace trashes, however deep in the operation that happens.
final class ReplacedItems: Sendable {
    @TaskLocal static var current: ReplacedItems?

    /// Who performs the operation, for the versions it keeps.
    let author: ChangeAuthor?
    private let items = Mutex<[String]>([])
    private let keptVersions = Mutex<[Int]>([])

    init(author: ChangeAuthor? = nil) { self.author = author }

    var trashed: [String] { items.withLock { $0 } }

    /// The versions the operation's replaces kept.
    var versions: [Int] { keptVersions.withLock { $0 } }

    func add(_ id: String) { items.withLock { $0.append(id) } }

    func remove(_ id: String) { items.withLock { $0.removeAll { $0 == id } } }

    func addVersion(_ id: Int) { keptVersions.withLock { $0.append(id) } }

    func removeVersion(_ id: Int) { keptVersions.withLock { $0.removeAll { $0 == id } } }

    // MARK: The changes, for the session's journal

    private struct Journal {
        var changes: [ChangeDraft] = []
        /// What a replace displaced at each place, until the change that placed the new item takes it.
        var displaced: [VirtualPath: (version: Int?, trash: String?)] = [:]
    }
    private let journal = Mutex(Journal())

    /// The changes noted so far, in order.
    var changes: [ChangeDraft] { journal.withLock { $0.changes } }

    func noteDisplaced(at path: VirtualPath, version: Int? = nil, trash: String? = nil) {
        journal.withLock { $0.displaced[path] = (version, trash) }
    }

    func forgetDisplaced(at path: VirtualPath) { journal.withLock { $0.displaced[path] = nil } }

    /// Notes `change`, with what a replace displaced at its path.
    func note(_ change: ChangeDraft) {
        journal.withLock { journal in
            var change = change
            if let displaced = journal.displaced.removeValue(forKey: change.path) {
                change.keptVersion = displaced.version
                change.displacedTrashID = displaced.trash
                if change.kind == .create { change.kind = .replace }
            }
            journal.changes.append(change)
        }
    }
}

extension FileService {
    /// Puts an item at `destination` in place of what is there, which is kept: a file replaced
    /// by a file as a version of it (where the service keeps versions), anything else in the
    /// trash.
    ///
    /// Nothing is lost at any point, a crash included:
    /// - a file kept as a version is linked (or copied) into the version store while it is
    ///   still in place, and the new item then replaces it in one step: the place holds the old
    ///   file or the new one, never neither;
    /// - where the mount moves items atomically and the item is made anew (a copy, a write,
    ///   an import), it is made under a hidden partial name beside `destination` first; only
    ///   when it is complete is the old item kept aside, and the new one is renamed
    ///   into its place at once. Until then the old item is where it was;
    /// - where one write replaces a file atomically but nothing moves atomically (S3), a copy
    ///   of the old file goes to the mount's trash first, then the write replaces the file
    ///   (refused, as S3 refuses it, if another writer changed it since the write began: then
    ///   the copy is dropped again); where the mount's storage keeps versions
    ///   (``VersionKeepingBackend``), it keeps the old file as a version instead of the trash copy;
    /// - otherwise (a move, whose source must never sit under a name that a crash clean-up
    ///   removes; a mount that cannot rename) the old item goes to the trash first, and the
    ///   new one is put in its place.
    /// If the new item cannot be placed, the old one is put back from the trash.
    ///
    /// A folder is replaced by a file, or a file by a folder, only under `.replaceFolder`.
    ///
    /// With `expected` (a conditional save), what is there must be the file at that version,
    /// checked when the replace begins and again just before the old file is displaced;
    /// otherwise `changedSinceRead`, and nothing changes.
    func replacing(_ destination: VirtualPath, with arriving: Arrival, policy: ConflictPolicy,
                   expecting expected: FileVersion? = nil,
                   _ operation: (VirtualPath, ConflictPolicy) async throws -> Void) async throws(CofferError) -> VirtualPath {
        let backend = try writableMount(for: destination).backend
        // Another writer may take the name between the look and the placing: look again.
        for _ in 0..<3 {
            let existing: FileNode
            do {
                existing = try await stat(destination)
                if let expected { try Self.require(expected, of: existing) }
            } catch where error.kind == .noSuchFile {
                if expected != nil { throw CofferError.changedSinceRead(destination, now: nil) }
                do {
                    try await self.call(destination) { try await operation(destination, .fail) }
                } catch where error.kind == .fileExists {
                    continue
                }
                await indexChanged([destination])
                return destination
            }
            try policy.checkReplacing(folder: existing.kind != .file, with: arriving.isFolder, at: destination)
            if let copying = backend as? any TrashCopyingBackend, existing.kind == .file, !arriving.isFolder,
               !arriving.movesSource, !backend.capabilities.contains(.atomicMove) {
                // One atomic write replaces the file (conditional on the version it began
                // from, where the storage checks that); the storage keeps it as a version
                // first, or, where versions are not kept, a copy of it is in the trash.
                if let id = try await keepVersion(of: existing) {
                    ReplacedItems.current?.addVersion(id)
                    ReplacedItems.current?.noteDisplaced(at: destination, version: id)
                    do throws(CofferError) {
                        try await self.call(destination) { try await operation(destination, .replace) }
                    } catch {
                        await discardVersion(id, of: destination)
                        ReplacedItems.current?.removeVersion(id)
                        ReplacedItems.current?.forgetDisplaced(at: destination)
                        throw error
                    }
                    await indexChanged([destination])
                    return destination
                }
                let copy = try await copying.trashCopy(of: destination)
                ReplacedItems.current?.add(destination.mount + "/" + copy.id)
                ReplacedItems.current?.noteDisplaced(at: destination, trash: destination.mount + "/" + copy.id)
                do throws(CofferError) {
                    try await self.call(destination) { try await operation(destination, .replace) }
                } catch {
                    try? await copying.discardTrashCopy(copy.id)
                    ReplacedItems.current?.remove(destination.mount + "/" + copy.id)
                    throw error
                }
            } else if !arriving.movesSource && backend.capabilities.contains(.atomicMove) {
                let staging = (destination.parent ?? .root(of: destination.mount)).appending(trustedName: PartialName.make())
                try await self.call(destination) { try await operation(staging, .fail) }
                do throws(CofferError) {
                    // (Gone meanwhile: the new item takes the free place.)
                    var displaced: Displaced?
                    if let current = try await present(destination, expected: expected) {
                        displaced = try await displace(current, arriving: arriving)
                    }
                    do throws(CofferError) {
                        try await self.call(destination) {
                            try await backend.moveItem(at: staging, to: destination, conflict: displaced?.placing ?? .fail)
                        }
                    } catch {
                        if let displaced { await putBack(displaced) }
                        throw error
                    }
                } catch {
                    try? await backend.removeItem(at: staging)
                    throw error
                }
            } else {
                var displaced: Displaced?
                if let current = try await present(destination, expected: expected) {
                    displaced = try await displace(current, arriving: arriving)
                }
                do throws(CofferError) {
                    try await self.call(destination) { try await operation(destination, displaced?.placing ?? .fail) }
                } catch {
                    if let displaced { await putBack(displaced) }
                    throw error
                }
            }
            await indexChanged([destination])
            return destination
        }
        throw CofferError(.fileExists, path: destination)
    }

    /// Throws `changedSinceRead` unless `node` is a file at `version`.
    static func require(_ version: FileVersion, of node: FileNode) throws(CofferError) {
        try node.requireReadableFile()
        guard node.version == version else { throw CofferError.changedSinceRead(node.path, now: node) }
    }

    /// What is at `path` just before it is displaced, at `expected` when given; `nil` when it is
    /// gone meanwhile and no version was expected (the place is free).
    private func present(_ path: VirtualPath, expected: FileVersion?) async throws(CofferError) -> FileNode? {
        do {
            let node = try await stat(path)
            if let expected { try Self.require(expected, of: node) }
            return node
        } catch where error.kind == .noSuchFile {
            if expected != nil { throw CofferError.changedSinceRead(path, now: nil) }
            return nil
        }
    }

    /// The node at `path` for a version check: a file that is gone has changed.
    func versionedNode(_ path: VirtualPath) async throws(CofferError) -> FileNode {
        do {
            return try await stat(path)
        } catch where error.kind == .noSuchFile {
            throw CofferError.changedSinceRead(path, now: nil)
        }
    }

    /// Where a replace put what it displaced.
    enum Displaced {
        /// Moved to the trash: the place is free.
        case trash(TrashItem)
        /// Kept as this version while it stays in place, for the new item to replace.
        case version(Int, VirtualPath)

        /// How the new item is placed: over the file kept as a version, else in a free place.
        var placing: ConflictPolicy {
            if case .version = self { return .replace }
            return .fail
        }
    }

    /// Moves what a replace displaces out of the way, and notes it for the audit entry: a
    /// file replaced by a file becomes a version of it (where the service keeps versions),
    /// anything else goes to the trash.
    private func displace(_ current: FileNode, arriving: Arrival) async throws(CofferError) -> Displaced {
        if current.kind == .file, !arriving.isFolder, let id = try await keepVersion(of: current) {
            ReplacedItems.current?.addVersion(id)
            ReplacedItems.current?.noteDisplaced(at: current.path, version: id)
            return .version(id, current.path)
        }
        // Not journaled as a change of its own: the change that takes its place reverts it.
        let item = try await unjournaled { () async throws(CofferError) in try await trash(current.path) }
        ReplacedItems.current?.add(item.id)
        ReplacedItems.current?.noteDisplaced(at: current.path, trash: item.id)
        return .trash(item)
    }

    /// Puts a displaced item back where it was after the replace failed (best effort: when
    /// it cannot go back, it stays in the trash or among the versions, restorable).
    private func putBack(_ displaced: Displaced) async {
        switch displaced {
        case .trash(let item):
            guard (try? await unjournaled { () async throws(CofferError) in try await restore(item.id, conflict: .fail) }) != nil
            else { return }
            ReplacedItems.current?.remove(item.id)
            ReplacedItems.current?.forgetDisplaced(at: item.originalPath)
        case .version(let id, let path):
            // Still in place: only the version goes.
            await discardVersion(id, of: path)
            ReplacedItems.current?.removeVersion(id)
            ReplacedItems.current?.forgetDisplaced(at: path)
        }
    }

    /// Runs `body` with its changes kept out of the session's journal (they are part of a
    /// change noted otherwise).
    func unjournaled<T: Sendable>(_ body: () async throws(CofferError) -> T) async throws(CofferError) -> T {
        let result: Result<T, CofferError> = await ReplacedItems.$current.withValue(nil) {
            do throws(CofferError) { return .success(try await body()) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
