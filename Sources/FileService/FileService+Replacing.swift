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

    private let items = Mutex<[String]>([])

    var trashed: [String] { items.withLock { $0 } }

    func add(_ id: String) { items.withLock { $0.append(id) } }

    func remove(_ id: String) { items.withLock { $0.removeAll { $0 == id } } }
}

extension FileService {
    /// Puts an item at `destination` in place of what is there, which goes to the trash.
    ///
    /// Nothing is lost at any point, a crash included:
    /// - where the mount moves items atomically and the item is made anew (a copy, a write,
    ///   an import), it is made under a hidden partial name beside `destination` first; only
    ///   when it is complete does the old item go to the trash, and the new one is renamed
    ///   into its place at once. Until then the old item is where it was;
    /// - where one write replaces a file atomically but nothing moves atomically (S3), a copy
    ///   of the old file goes to the mount's trash first, then the write replaces the file
    ///   (refused, as S3 refuses it, if another writer changed it since the write began: then
    ///   the copy is dropped again);
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
                // from, where the storage checks that); a copy of it is in the trash first.
                let copy = try await copying.trashCopy(of: destination)
                ReplacedItems.current?.add(destination.mount + "/" + copy.id)
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
                    if let expected { try Self.require(expected, of: try await versionedNode(destination)) }
                    let trashed = try await trashReplaced(destination)
                    do throws(CofferError) {
                        try await self.call(destination) {
                            try await backend.moveItem(at: staging, to: destination, conflict: .fail)
                        }
                    } catch {
                        await putBack(trashed)
                        throw error
                    }
                } catch {
                    try? await backend.removeItem(at: staging)
                    throw error
                }
            } else {
                if let expected { try Self.require(expected, of: try await versionedNode(destination)) }
                let trashed = try await trashReplaced(destination)
                do throws(CofferError) {
                    try await self.call(destination) { try await operation(destination, .fail) }
                } catch {
                    await putBack(trashed)
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

    /// The node at `path` for a version check: a file that is gone has changed.
    func versionedNode(_ path: VirtualPath) async throws(CofferError) -> FileNode {
        do {
            return try await stat(path)
        } catch where error.kind == .noSuchFile {
            throw CofferError.changedSinceRead(path, now: nil)
        }
    }

    /// Moves what a replace displaces to the trash, and notes it for the audit entry.
    private func trashReplaced(_ path: VirtualPath) async throws(CofferError) -> TrashItem {
        let item = try await trash(path)
        ReplacedItems.current?.add(item.id)
        return item
    }

    /// Puts a displaced item back where it was after the replace failed (best effort: when
    /// it cannot go back, it stays in the trash, restorable).
    private func putBack(_ item: TrashItem) async {
        guard (try? await restore(item.id, conflict: .fail)) != nil else { return }
        ReplacedItems.current?.remove(item.id)
    }
}
