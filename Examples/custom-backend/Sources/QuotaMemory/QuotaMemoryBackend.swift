// `mem:` — a storage backend of the application's own: files kept in memory, up to a quota.
// It uses only Coffer's public API: `StorageBackend` and two capabilities from CofferCore, and
// `InMemoryBackend` for the storage itself. Tests/QuotaMemoryTests runs Coffer's conformance
// suite on it.
import CofferCore
import CofferInMemory
import Foundation
import Synchronization

/// `mem:` — files kept in memory, up to a quota.
///
/// A backend is any `Sendable` type conforming to `StorageBackend`. This one keeps its items
/// in an `InMemoryBackend` and adds one rule of its own: the bytes of all its files may not
/// exceed `quota`. A write that would go over fails with `outOfSpace`, which both front ends
/// show as the message a full disk gets, and leaves nothing behind.
public final class QuotaMemoryBackend: StorageBackend, SpaceReportingBackend {
    /// The most bytes all files together may hold.
    public let quota: Int64
    /// Where the items are. `InMemoryBackend` already keeps the contract: names byte for
    /// byte, writes invisible until committed, atomic moves.
    let storage = InMemoryBackend()
    /// Bytes promised to commits under way: two commits at once must not both fit in room
    /// only one of them has. (`InMemoryBackend` commits without suspending, so here they cannot
    /// overlap; a backend over a disk or a network, where a commit waits, needs exactly this.)
    let reserved = Mutex<Int64>(0)

    public init(quota: Int64) {
        self.quota = quota
    }

    /// Bytes held by all files now.
    public var usedBytes: Int64 { storage.usedBytes }

    /// Bytes held, plus those promised to commits under way.
    var committedAndPromised: Int64 { reserved.withLock { $0 } + usedBytes }

    /// Promises `bytes` (negative when a commit frees room) to a commit of `path`, or fails
    /// with `outOfSpace` when the quota has no room for them.
    func reserve(_ bytes: Int64, for path: VirtualPath) throws(CofferError) {
        try reserved.withLock { (reserved: inout Int64) throws(CofferError) in
            guard bytes <= 0 || storage.usedBytes + reserved + bytes <= quota else {
                throw CofferError(.outOfSpace, path: path)
            }
            reserved += bytes
        }
    }

    /// Gives back what ``reserve(_:for:)`` promised, once the commit has ended.
    func release(_ bytes: Int64) {
        reserved.withLock { $0 -= bytes }
    }

    // `SpaceReportingBackend`: how full the mount is. Front ends ask through a session
    // (`MeasureSpace`), so they never need to know this type.
    public func space() async throws -> StorageSpace {
        StorageSpace(usedBytes: usedBytes, totalBytes: quota)
    }

    // What the backend can do. `.writable` lets the service change things here; without
    // it, `FileService` refuses every change with `readOnly` before calling the backend.
    public var capabilities: BackendCapabilities { [.writable, .atomicMove] }

    // Reading, creating folders, moving and removing need no rule of their own: the calls
    // go straight through. Paths arrive validated and relative to this mount's root
    // (`mem:/a/b` has components ["a", "b"]); errors are `CofferError`s naming the path.
    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        try await storage.contentsOfFolder(at: path)
    }

    public func node(at path: VirtualPath) async throws -> FileNode {
        try await storage.node(at: path)
    }

    public func createFolder(at path: VirtualPath) async throws {
        try await storage.createFolder(at: path)
    }

    public func openFile(at path: VirtualPath) async throws -> any ReadableFile {
        try await storage.openFile(at: path)
    }

    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        try await storage.moveItem(at: source, to: destination, conflict: conflict)
    }

    public func removeItem(at path: VirtualPath) async throws {
        try await storage.removeItem(at: path)
    }

    // Writing is where the quota is kept. Every byte the service writes here — `cp`,
    // `files/write`, uploads, imports, and copies from other mounts, which stream through
    // `makeWrite` — passes through a `QuotaWrite`.
    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite {
        // A file already at `path` may be replaced by this write, giving its bytes back.
        let existing = (try? await storage.node(at: path))?.size ?? 0
        return QuotaWrite(inner: try await storage.makeWrite(at: path), path: path, replacing: existing, backend: self)
    }

    // `copyItem` is not written here: the protocol's default copies by reading and writing
    // through the methods above, so copies inside `mem:` are counted too.
}

/// A write to `mem:` that fails as soon as the quota would be exceeded.
final class QuotaWrite: PendingWrite {
    let inner: any PendingWrite
    let path: VirtualPath
    let backend: QuotaMemoryBackend
    /// The size of the file this write may replace, when it began.
    let replacing: Int64
    private let pending = Mutex<Int64>(0)

    init(inner: any PendingWrite, path: VirtualPath, replacing: Int64, backend: QuotaMemoryBackend) {
        self.inner = inner
        self.path = path
        self.replacing = replacing
        self.backend = backend
    }

    func write(_ bytes: [UInt8]) async throws {
        let total = pending.withLock { pending in
            pending += Int64(bytes.count)
            return pending
        }
        // Fail early, before holding more bytes than could ever be kept. The service aborts
        // the write after a failure, so nothing of it is left.
        if backend.committedAndPromised - replacing + total > backend.quota { throw CofferError(.outOfSpace, path: path) }
        try await inner.write(bytes)
    }

    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {
        try await inner.setAttributes(permissions: permissions, modificationDate: modificationDate)
    }

    func commit(conflict: ConflictPolicy) async throws {
        // Checked again at the end, against what is held now and what other commits under way
        // were promised: the room is reserved before the commit and given back after it. A file
        // this one replaces gives its bytes back.
        let replaced = conflict == .replace ? ((try? await backend.node(at: path))?.size ?? 0) : 0
        let growth = pending.withLock { $0 } - replaced
        try backend.reserve(growth, for: path)
        defer { backend.release(growth) }
        try await inner.commit(conflict: conflict)
    }

    func abort() async {
        await inner.abort()
    }
}

