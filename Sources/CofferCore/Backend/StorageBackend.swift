/// Where a mount keeps its items: the local sandbox, the trash, an application's own store.
///
/// A backend is one type, registered as a ``Mount`` in one place (`CofferApplication`'s
/// `extraMounts`, or `FileService.standard(container:extraMounts:)`); both front ends then
/// show it with no change to them. `CofferBackendConformance` checks a backend against this
/// contract from its own tests; <doc:Writing-a-Storage-Backend> walks through one, and
/// through the capabilities a backend may add by adopting more protocols.
///
/// ## Contract
/// - **Paths.** Every path a backend receives has been normalised and checked by
///   ``VirtualPath``: no `.`/`..`, no empty or over-long names, no NUL. Only `components`
///   matter to the backend (relative to its root); the mount name is a label it copies into
///   the nodes it returns. Names are compared byte for byte: `café` in NFC and in NFD are
///   two items (a Swift `String` key would merge them).
/// - **Confinement.** A backend never reads or writes outside its own root, whatever links
///   or races it meets.
/// - **Atomic writes.** A write is invisible — to listings, to ``node(at:)``, to readers —
///   until ``PendingWrite/commit(conflict:)``, which makes the whole file appear at once;
///   ``PendingWrite/abort()`` leaves nothing behind, also after a failed write or commit.
/// - **Conflicts.** Commits and moves honour ``ConflictPolicy/fail`` (an existing item wins:
///   throw `fileExists`, change nothing) and ``ConflictPolicy/replace``.
///   ``ConflictPolicy/keepBoth`` never reaches a backend: `FileService` picks a free name
///   and asks again with `.fail`, so `.fail` must be exact even when two commits race.
/// - **Partial results.** Names of the ``PartialName`` shape are Coffer's
///   own unfinished copies; listings leave them out.
/// - **Errors.** Every error thrown is a ``CofferError`` naming the virtual path it concerns:
///
///   | situation | kind |
///   |---|---|
///   | the item, or a folder on the way to it, does not exist | `noSuchFile` |
///   | a file stands where a folder is needed (`a.txt/b`) | `notADirectory` (or `noSuchFile`) |
///   | ``openFile(at:)`` of a folder | `isADirectory` |
///   | a name is taken (`createFolder`, `.fail` commits and moves) | `fileExists` |
///   | a folder moved into itself, the root renamed | `invalidOperation` |
///   | no room left (disk, quota) | `outOfSpace` |
///   | not allowed by the store | `noPermission` |
///   | any change to a backend without ``BackendCapabilities/writable`` | `readOnly` |
///   | a link, pipe or device opened as a file | `unsupported` |
///   | anything else | `ioError` |
///
///   Front ends turn these into the user's messages; `cancelled` is the service's to throw.
/// - **Threads.** Blocking I/O must not run on Swift's cooperative thread pool (run it on
///   Dispatch, as `BlockingIO` does); a backend that never blocks (in memory) may stay put.
///
/// Only listing, stat, folder creation, reading, writing, moving and removing are required.
/// Copying has a default that streams through ``openFile(at:)`` and ``makeWrite(at:)``, so
/// any two backends can copy to each other, and copies across mounts always go that way; a
/// backend may override ``copyItem(at:to:conflict:progress:)`` with a fast path. The batch
/// reads searches use (``entries(inFoldersAt:)``, ``nodes(at:)``,
/// ``folderModificationDates(at:)``) have defaults built on the required methods too.
///
/// ## Topics
///
/// ### Describing the backend
/// - ``capabilities``
///
/// ### Reading
/// - ``contentsOfFolder(at:)``
/// - ``contentsOfFolder(at:readingBackupExclusion:)``
/// - ``node(at:)``
/// - ``openFile(at:)``
///
/// ### Changing
/// - ``createFolder(at:)``
/// - ``makeWrite(at:)``
/// - ``makeWrite(at:announcing:)``
/// - ``moveItem(at:to:conflict:)``
/// - ``removeItem(at:)``
/// - ``copyItem(at:to:conflict:progress:)``
///
/// ### Reading in batches
/// - ``entries(inFolderAt:)``
/// - ``entries(inFoldersAt:)``
/// - ``nodes(at:)``
/// - ``folderModificationDates(at:)``
public protocol StorageBackend: Sendable {
    /// What this backend can do: whether it is ``BackendCapabilities/writable``, whether its
    /// moves are atomic, whether it keeps backup exclusion. `FileService` refuses changes to a
    /// backend without ``BackendCapabilities/writable`` before calling it.
    var capabilities: BackendCapabilities { get }

    /// The items directly inside the folder at `path`, unsorted, hidden ones included, each
    /// with `path` and its own name as its ``FileNode/path``. Partial results
    /// (``PartialName``) are left out.
    /// - Throws: `noSuchFile` when the folder does not exist; `notADirectory` (or
    ///   `noSuchFile`) when `path` is a file; `noPermission`, `ioError` from the store.
    func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode]

    /// The same, leaving out what the caller said it will not show: without
    /// `readingBackupExclusion` a backend may skip reading each item's exclusion (which then
    /// reads `false`). The default reads everything, as ``contentsOfFolder(at:)``.
    /// - Throws: as ``contentsOfFolder(at:)``.
    func contentsOfFolder(at path: VirtualPath, readingBackupExclusion: Bool) async throws -> [FileNode]

    /// The item at `path`, not following a link (the mount's root is a folder).
    /// - Throws: `noSuchFile` when the item, or a folder on the way to it, does not exist;
    ///   `notADirectory` (or `noSuchFile`) when a file stands on the way (`a.txt/b`);
    ///   `noPermission`, `ioError` from the store.
    func node(at path: VirtualPath) async throws -> FileNode

    /// Creates one folder; its parent must exist.
    /// - Throws: `fileExists` when the name is taken (by a folder or a file); `noSuchFile`
    ///   when the parent does not exist; `readOnly` for a backend that is not writable;
    ///   `outOfSpace`, `noPermission`, `ioError` from the store.
    func createFolder(at path: VirtualPath) async throws

    /// Opens a regular file for reading, at its start. The caller closes it.
    /// - Throws: `noSuchFile` when there is no such item; `isADirectory` for a folder;
    ///   `unsupported` for a link, pipe, socket or device; `noPermission`, `ioError` from the store.
    func openFile(at path: VirtualPath) async throws -> any ReadableFile

    /// Starts a write that becomes the file at `path` only when committed
    /// (``PendingWrite/commit(conflict:)``); until then nothing of it is visible. Whether a
    /// name is taken is decided at the commit, not here.
    /// - Throws: `readOnly` for a backend that is not writable; `noSuchFile` (or
    ///   `notADirectory`) when the folder it is to go in does not exist; `outOfSpace`,
    ///   `noPermission`, `ioError` from the store.
    func makeWrite(at path: VirtualPath) async throws -> any PendingWrite

    /// Starts a write whose size and date are known before its first byte (a copy's): a
    /// backend across a network can send the data while it is written instead of after the
    /// commit. The write is still invisible until committed, and the date still comes
    /// through `setAttributes`. The default ignores what is announced and calls
    /// ``makeWrite(at:)``, so a backend that wraps its writes must implement both.
    /// - Throws: as ``makeWrite(at:)``.
    func makeWrite(at path: VirtualPath, announcing expected: ExpectedWrite) async throws -> any PendingWrite

    /// Moves or renames within this backend; a folder takes everything in it along.
    /// - Throws: `noSuchFile` when the source, or the destination's folder, does not exist;
    ///   `fileExists` when `conflict` is ``ConflictPolicy/fail`` and the destination is taken
    ///   (nothing changes); `invalidOperation` for a folder moved into itself or the root
    ///   moved; `readOnly` for a backend that is not writable; `noPermission`, `ioError` from
    ///   the store.
    func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws

    /// Removes a file, or a folder with everything in it. Used for real deletes only
    /// (emptying the trash, cleaning partial results, replacing on request).
    /// - Throws: `noSuchFile` when there is no such item; `invalidOperation` for the root;
    ///   `readOnly` for a backend that is not writable; `noPermission`, `ioError` from the store.
    func removeItem(at path: VirtualPath) async throws

    /// Copies within this backend. The default streams file contents through
    /// ``openFile(at:)`` and ``makeWrite(at:announcing:)`` and builds a folder under a
    /// partial name, placing it only when complete (``StreamingCopy``).
    /// - Throws: `fileExists` when `conflict` is ``ConflictPolicy/fail`` and the destination
    ///   is taken; `cancelled` when the task is cancelled (nothing is left); and what
    ///   reading the source and writing the copy throw.
    func copyItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy,
                  progress: ProgressReporter) async throws

    /// The names in a folder with just enough to walk it: what each entry is and whether
    /// it is hidden. Searches and the index call this for every folder, so it should be
    /// cheaper than ``contentsOfFolder(at:)``; the default derives it from that.
    /// - Throws: as ``contentsOfFolder(at:)``.
    func entries(inFolderAt path: VirtualPath) async throws -> [FolderEntry]

    /// ``entries(inFolderAt:)`` for several folders at once, each with its own outcome, in
    /// the order of `paths`. A walk asks for a folder's subfolders together; backends where
    /// each call has a fixed cost (a thread hop, a network round trip) answer them in one go.
    func entries(inFoldersAt paths: [VirtualPath]) async -> [Result<[FolderEntry], CofferError>]

    /// ``node(at:)`` for several items at once, in the order of `paths`; `nil` for one that
    /// cannot be read.
    func nodes(at paths: [VirtualPath]) async -> [FileNode?]

    /// The modification dates of folders, in the order of `paths`; `nil` for one that is
    /// gone or not a folder. The search index compares them to tell which folders changed
    /// since it read them. The default asks ``node(at:)`` for each.
    /// - Throws: `ioError` when the store cannot be asked at all (the default never throws).
    func folderModificationDates(at paths: [VirtualPath]) async throws -> [Date?]

    /// Whether reading items by name (``nodes(at:)``) costs about what listing them does, as on
    /// a local disk: a huge folder is then gone through as names first and its items a batch at
    /// a time (``entries(inFolderAt:)``). `false` (the default) where each item is a request of
    /// its own (S3): the folder is then listed whole, in the store's own pages.
    var readsItemsByNameCheaply: Bool { get }
}

/// One entry of a folder, as a walk needs it.
public struct FolderEntry: Sendable, Hashable {
    /// What an entry is, as far as a walk cares.
    public enum Kind: Sendable, Hashable {
        /// A folder (or a package): something a walk may go into.
        case folder
        /// A regular file.
        case file
        /// A link, pipe, socket or device: listed, never opened or followed.
        case special

        /// What `node` is, as a walk sees it.
        public init(of node: FileNode) {
            self = node.special != nil ? .special : (node.kind == .file ? .file : .folder)
        }
    }

    /// The entry's name in its folder.
    public var name: String
    /// What the entry is.
    public var kind: Kind
    /// A dot-name, or listed in the folder's `.hidden`.
    public var isHidden: Bool

    /// An entry named `name`.
    public init(name: String, kind: Kind, isHidden: Bool) {
        self.name = name
        self.kind = kind
        self.isHidden = isHidden
    }

    /// The file whose lines name a folder's other hidden items, as file managers read it.
    /// Editing it in place hides and shows items without changing the folder's time.
    public static let hiddenListName = ".hidden"
}

/// What a backend supports. The service consults it; the backend must still refuse what it
/// cannot do.
///
/// Capabilities that add methods are protocols instead (``TaggingBackend``,
/// ``WatchableBackend``, …); these three only say how the required methods behave.
public struct BackendCapabilities: OptionSet, Sendable, Hashable {
    /// The options as bits.
    public let rawValue: Int
    /// The options whose bits are set in `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Items can be created, changed, moved and removed. Without it a mount is read-only:
    /// `FileService` refuses changes with `readOnly` before calling the backend.
    public static let writable = BackendCapabilities(rawValue: 1 << 0)
    /// Per-item backup exclusion is stored (``FileNode/isExcludedFromBackup`` means something).
    public static let backupExclusion = BackendCapabilities(rawValue: 1 << 1)
    /// Moves within the backend are atomic renames: an observer sees the item at the old
    /// place or at the new one, never both or neither.
    public static let atomicMove = BackendCapabilities(rawValue: 1 << 2)
}

/// An open file being read, from ``StorageBackend/openFile(at:)``.
///
/// Whoever opened it closes it with ``close()``.
public protocol ReadableFile: Sendable {
    /// The size when it was opened.
    var size: Int64 { get }
    /// Up to `count` bytes from the current position, which moves past them; empty at the end.
    /// - Throws: `ioError` (or another kind from the store, `noPermission`) when the read fails.
    func read(upTo count: Int) async throws -> [UInt8]
    /// Up to `count` bytes from `offset`, leaving the current position alone; empty at or past
    /// the end. The default reads forward from the current position, so it only works for
    /// offsets not yet passed; backends with random access override it.
    /// - Throws: as ``read(upTo:)``.
    func read(at offset: Int64, upTo count: Int) async throws -> [UInt8]
    /// Releases the file. Reading afterwards is an error.
    func close() async
    /// The version of the content being read (``FileNode/version``), where the storage
    /// tells: a save conditional on it replaces exactly what was read.
    var version: FileVersion? { get }
    /// The file's `user.` attributes, which a copy carries to the new file (none by default).
    func userAttributes() async -> UserAttributes
}

/// A file being written under a temporary name, invisible until committed, from
/// ``StorageBackend/makeWrite(at:)``.
///
/// Whoever made it ends it with ``commit(conflict:)`` or ``abort()``; after a failed write or
/// commit, it calls ``abort()``.
public protocol PendingWrite: Sendable {
    /// Appends bytes.
    /// - Throws: `outOfSpace` when the store (a disk, a quota) has no room; `ioError`.
    func write(_ bytes: [UInt8]) async throws
    /// Sets the permission bits and modification time the finished file will have (`nil`:
    /// the store's default, the time of the commit).
    /// - Throws: `ioError` from the store.
    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws
    /// Makes the file visible under its real name, all at once. With `.fail` an existing item
    /// wins and `fileExists` is thrown (the write is discarded), exactly, even when commits
    /// race; with `.replace` it is replaced.
    /// - Throws: `fileExists` as above; `noSuchFile` when the folder it goes in is gone;
    ///   `changedSinceRead` when the write announced a version to replace
    ///   (``ExpectedWrite/replacing``) and the file is no longer at it; `outOfSpace`, `ioError`.
    func commit(conflict: ConflictPolicy) async throws
    /// Discards everything written. Safe to call after a failed commit.
    func abort() async
    /// Gives the file these `user.` attributes, before or after its content (a backend that
    /// sends metadata with its upload keeps them until the commit).
    /// - Returns: those it could not keep (every one, by default: the backend keeps none).
    func setUserAttributes(_ attributes: UserAttributes) async -> [LostAttribute]
}

public import Foundation

/// What a write will be, said when it starts: ``StorageBackend/makeWrite(at:announcing:)``.
public struct ExpectedWrite: Sendable, Hashable {
    /// The bytes that will be written, if known.
    public var size: Int64?
    /// The modification date the file will be given, if known (it still comes through
    /// ``PendingWrite/setAttributes(permissions:modificationDate:)``).
    public var modificationDate: Date?
    /// For a conditional save: the version of the file the write is to replace. A backend
    /// that can make its commit conditional on it (S3's `If-Match`) does, and throws
    /// `changedSinceRead` when the file is no longer at it; `FileService` checks it as well
    /// just before placing the write, for backends that cannot.
    public var replacing: FileVersion?

    /// An announcement of a write of `size` bytes dated `modificationDate`.
    public init(size: Int64?, modificationDate: Date?, replacing: FileVersion? = nil) {
        self.size = size
        self.modificationDate = modificationDate
        self.replacing = replacing
    }
}

extension StorageBackend {
    public func makeWrite(at path: VirtualPath, announcing expected: ExpectedWrite) async throws -> any PendingWrite {
        try await makeWrite(at: path)
    }

    public func contentsOfFolder(at path: VirtualPath, readingBackupExclusion: Bool) async throws -> [FileNode] {
        try await contentsOfFolder(at: path)
    }

    public func entries(inFolderAt path: VirtualPath) async throws -> [FolderEntry] {
        try await contentsOfFolder(at: path).map { node in
            FolderEntry(name: node.name, kind: FolderEntry.Kind(of: node), isHidden: node.isHidden)
        }
    }

    public func entries(inFoldersAt paths: [VirtualPath]) async -> [Result<[FolderEntry], CofferError>] {
        var results: [Result<[FolderEntry], CofferError>] = []
        for path in paths {
            do {
                results.append(.success(try await entries(inFolderAt: path)))
            } catch {
                results.append(.failure(CofferError.wrapping(error, path: path)))
            }
        }
        return results
    }

    public func nodes(at paths: [VirtualPath]) async -> [FileNode?] {
        var nodes: [FileNode?] = []
        for path in paths { nodes.append(try? await node(at: path)) }
        return nodes
    }

    public var readsItemsByNameCheaply: Bool { false }

    public func folderModificationDates(at paths: [VirtualPath]) async throws -> [Date?] {
        var dates: [Date?] = []
        for path in paths {
            let node = try? await node(at: path)
            dates.append(node.flatMap { $0.kind == .file ? nil : $0.modificationDate })
        }
        return dates
    }
}

/// A backend that can report changes to its items as they happen, including changes
/// made by other processes.
///
/// With it, `files/watch` and the web page's live folders work on the mount, and the search
/// index keeps itself current. Without it, a watch is answered with `unsupported`.
public protocol WatchableBackend: StorageBackend {
    /// Starts reporting changes below the folder at `path` (in every subfolder when
    /// `recursive`), or to the file at `path`. `handler` receives batches of changes,
    /// coalesced over about 100 ms, on a thread of the backend's choosing; it is never
    /// called after ``ChangeWatch/cancel()`` returns.
    ///
    /// With `reportingPassing`, an item created and deleted within one window is reported
    /// `deleted` instead of not at all: for a cache that may have read it in between (a search
    /// index's pass), which must hear it is gone.
    /// - Throws: `noSuchFile` when there is nothing at `path`; `unsupported` or `ioError` when
    ///   the store cannot watch it (a system limit on watches reached).
    func watch(_ path: VirtualPath, recursive: Bool, reportingPassing: Bool,
               handler: @escaping @Sendable ([FileChange]) -> Void) async throws -> any ChangeWatch
}

extension WatchableBackend {
    /// Changes as a client shows them: an item that came and went within a window is left out.
    public func watch(_ path: VirtualPath, recursive: Bool,
                      handler: @escaping @Sendable ([FileChange]) -> Void) async throws -> any ChangeWatch {
        try await watch(path, recursive: recursive, reportingPassing: false, handler: handler)
    }
}

/// A watch in progress, from ``WatchableBackend/watch(_:recursive:reportingPassing:handler:)``.
/// Whoever started it cancels it.
public protocol ChangeWatch: Sendable {
    /// Stops the watch and releases what it holds. Safe to call more than once.
    func cancel()
}

extension ReadableFile {
    public var version: FileVersion? { nil }

    public func userAttributes() async -> UserAttributes { [:] }

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

/// A backend that can answer a metadata read at once, on the caller's thread: its reads
/// never wait long (a local disk, memory), so a front end may answer a `stat` where it
/// stands instead of handing it to another thread and back. Backends a network away do
/// not adopt it: a connection reads nothing else while it waits.
public protocol ImmediateMetadata: StorageBackend {
    /// What ``StorageBackend/node(at:)`` returns, without suspending.
    /// - Throws: what ``StorageBackend/node(at:)`` throws for the same path.
    func nodeImmediately(at path: VirtualPath) throws(CofferError) -> FileNode
}

/// A backend that lists everything below a folder more cheaply at once than folder by
/// folder: an S3 bucket answers one flat `ListObjectsV2` per 1,000 keys, where a walk would
/// cost a request per folder. Walks that read a whole tree (the search without an index)
/// use it.
public protocol TreeListingBackend: StorageBackend {
    /// What `contentsOfFolder` gives for the folder at `path` and for every folder below it,
    /// by folder (`path` included, even when empty).
    /// - Throws: as ``StorageBackend/contentsOfFolder(at:)`` for `path`.
    func contentsOfTree(at path: VirtualPath) async throws -> [VirtualPath: [FileNode]]
}

/// A backend that can make symbolic links (a local disk). Only links that stay inside their
/// mount are asked for (``VirtualPath/linkStaysInside(_:)``); the backend never follows one.
public protocol LinkingBackend: StorageBackend {
    /// Makes a symbolic link at `path` whose target is `target`, never replacing anything.
    /// - Throws: `fileExists` when something is at `path`, `noSuchFile` when its folder is
    ///   missing, `readOnly` on a read-only mount.
    func createSymbolicLink(at path: VirtualPath, target: String) async throws
}

/// A backend whose folders are listed in pages the store hands out one request at a time (an
/// S3 bucket answers `ListObjectsV2` 1,000 keys at once): a program that reads a folder as it
/// goes (`coffer mount`'s `readdir`) gets the first entries after one request, and nothing
/// holds a huge folder's listing whole.
public protocol PagedListingBackend: StorageBackend {
    /// The listing of the folder at `path`, its first page already read: a folder that is not
    /// there fails here.
    /// - Throws: as ``StorageBackend/contentsOfFolder(at:)``.
    func folderPages(at path: VirtualPath) async throws -> any FolderPages
}

/// A folder's listing read a page at a time (``PagedListingBackend``). Each item comes with
/// what the store said of it, as ``StorageBackend/contentsOfFolder(at:)`` gives it; together
/// the pages hold what that call returns, though not necessarily in its order. One reader at
/// a time: the pages follow each other.
public protocol FolderPages: Sendable {
    /// The next page's items; empty once the folder has been read through.
    /// - Throws: `ioError` (and the store's other failures) when a page cannot be read.
    func nextPage() async throws -> [FileNode]
}

/// An open file that a C library can read through a descriptor of its own (libvips and
/// libarchive read previews this way): the files of a local backend, already confined by
/// how the backend opened them.
public protocol DescriptorReadableFile: ReadableFile {
    /// A new descriptor for the same open file, at offset 0 and independent of this one's
    /// position; the caller closes it. It blocks: call it off Swift's cooperative pool.
    /// - Throws: `ioError` when the system gives no descriptor (too many open files).
    func openDescriptor() throws(CofferError) -> Int32
}

/// A backend whose items are files of this host: what other programs call an item (the
/// URI a thumbnail is named by), without opening it. The name is never used to open the
/// file; reads go through the backend.
///
/// With it, “open with” hands the mount's files to desktop applications by their `file://`
/// URI, and thumbnails are shared with the desktop's cache.
public protocol HostPathNaming: StorageBackend {
    /// The host path of the item at `path` (which need not exist).
    func hostPath(of path: VirtualPath) -> String
}

extension PendingWrite {
    public func setUserAttributes(_ attributes: UserAttributes) async -> [LostAttribute] {
        LostAttribute.all(attributes, .unsupported)
    }
}

/// A backend whose items' modification time can be set to now without rewriting them
/// (`touch` of an existing item). S3 objects cannot be: their time is their last upload.
public protocol TouchingBackend: StorageBackend {
    /// Sets the item's modification (and access) time to now; links are not followed. The
    /// content is not touched.
    /// - Throws: `noSuchFile` when there is no such item; `invalidOperation` for the root;
    ///   `readOnly` for a backend that is not writable; `noPermission`, `ioError` from the store.
    func touch(_ path: VirtualPath) async throws

    /// Sets the item's modification time to `date` without rewriting it (a sync client's
    /// time, as WebDAV's `X-OC-Mtime` carries it). The default throws `unsupported`.
    /// - Throws: as ``touch(_:)`` does.
    func setModificationDate(_ date: Date, at path: VirtualPath) async throws
}

extension TouchingBackend {
    public func setModificationDate(_ date: Date, at path: VirtualPath) async throws {
        throw CofferError(.unsupported, path: path, detail: "touch")
    }
}
