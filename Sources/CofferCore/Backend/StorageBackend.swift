/// Where a mount keeps its items: the local sandbox, the trash, an application's own store.
///
/// ## Contract
/// - Every path a backend receives has been normalised and checked by ``VirtualPath``:
///   no `.`/`..`, no empty or over-long names. Only `components` matter to the backend;
///   the mount name is a label it copies into the nodes it returns.
/// - A backend never reads or writes outside its own root, whatever links or races it meets.
/// - Writes are invisible until ``PendingWrite/commit(conflict:)``; ``PendingWrite/abort()``
///   leaves nothing behind. Moves and commits honour ``ConflictPolicy/fail`` and
///   ``ConflictPolicy/replace``; ``ConflictPolicy/keepBoth`` is decided by `FileService`,
///   which picks a free name and asks again with `.fail`.
/// - Every error thrown is a ``CofferError`` naming the virtual path it concerns.
/// - Blocking I/O must not run on Swift's cooperative thread pool.
///
/// Only listing, stat, folder creation, reading, writing, moving and removing are required.
/// Copying has a default that streams through ``openFile(at:)`` and ``makeWrite(at:)``, so
/// any two backends can copy to each other; a backend may override it with a fast path.
public protocol StorageBackend: Sendable {
    /// What this backend can do; `FileService` refuses changes to read-only backends.
    var capabilities: BackendCapabilities { get }

    /// The items directly inside the folder at `path`, unsorted, hidden ones included.
    func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode]

    /// The item at `path` (the mount's root is a folder).
    func node(at path: VirtualPath) async throws -> FileNode

    /// Creates one folder; its parent must exist. Throws `fileExists` when the name is taken.
    func createFolder(at path: VirtualPath) async throws

    /// Opens a regular file for reading. Links, pipes, sockets and devices are refused.
    func openFile(at path: VirtualPath) async throws -> any ReadableFile

    /// Starts a write that becomes the file at `path` only when committed.
    func makeWrite(at path: VirtualPath) async throws -> any PendingWrite

    /// Moves or renames within this backend.
    func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws

    /// Removes a file, or a folder with everything in it. Used for real deletes only
    /// (emptying the trash, cleaning partial results, replacing on request).
    func removeItem(at path: VirtualPath) async throws

    /// Copies within this backend. The default streams file contents and recreates folders.
    func copyItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy,
                  progress: ProgressReporter) async throws
}

/// What a backend supports.
public struct BackendCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Items can be created, changed, moved and removed.
    public static let writable = BackendCapabilities(rawValue: 1 << 0)
    /// Per-item backup exclusion is stored.
    public static let backupExclusion = BackendCapabilities(rawValue: 1 << 1)
    /// Moves within the backend are atomic renames.
    public static let atomicMove = BackendCapabilities(rawValue: 1 << 2)
}

/// An open file being read.
public protocol ReadableFile: Sendable {
    /// The size when it was opened.
    var size: Int64 { get }
    /// Up to `count` bytes from the current position; empty at the end.
    func read(upTo count: Int) async throws -> [UInt8]
    /// Up to `count` bytes from `offset`, leaving the current position alone. The default
    /// reads forward from the current position, so it only works for offsets not yet passed;
    /// backends with random access override it.
    func read(at offset: Int64, upTo count: Int) async throws -> [UInt8]
    /// Releases the file. Reading afterwards is an error.
    func close() async
}

/// A file being written under a temporary name, invisible until committed.
public protocol PendingWrite: Sendable {
    /// Appends bytes.
    func write(_ bytes: [UInt8]) async throws
    /// Sets the permission bits and modification time the finished file will have.
    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws
    /// Makes the file visible under its real name. With `.fail` an existing item wins
    /// and `fileExists` is thrown (the write is discarded); with `.replace` it is replaced.
    func commit(conflict: ConflictPolicy) async throws
    /// Discards everything written. Safe to call after a failed commit.
    func abort() async
}

import Foundation

extension ReadableFile {
    public func read(at offset: Int64, upTo count: Int) async throws -> [UInt8] {
        var skipped: Int64 = 0
        while skipped < offset {
            let chunk = try await read(upTo: Int(min(offset - skipped, 1 << 20)))
            if chunk.isEmpty { return [] }
            skipped += Int64(chunk.count)
        }
        return try await read(upTo: count)
    }
}
