import CCofferFUSE
import CofferCore
import CofferRuntime
import FileService
import Foundation
import Synchronization

/// The file system `coffer mount` serves: every call the kernel makes is answered from one
/// session of the service (front end `mount`), through the same operations every front end
/// uses. This type holds what the kernel and Coffer must agree on between calls: inode numbers
/// (``InodeTable``) and open files (``OpenHandle``). The calls are its extensions, by kind.
///
/// The kernel calls on libfuse's threads, several at once; each call waits for its operation
/// (at most ``MountOptions/operationTimeout``, then `EIO`), which those threads may do.
final class MountFileSystem: Sendable {
    let session: Session
    let options: MountOptions
    let table: InodeTable
    /// Deletions held back a moment, so `rm -r` leaves one folder in the trash.
    let pending = PendingDeletes()
    /// Where held deletions go to the trash, apart from the kernel's calls.
    let deletions = DispatchQueue(label: "coffer.mount.deletions")
    /// What tells the kernel of changes made elsewhere.
    let notifier = KernelNotifier()
    /// The visible mounts, for the root of `--all`.
    let mounts: [String]
    private let owner: (user: uid_t, group: gid_t)
    private let handles = Mutex<(open: [UInt64: OpenHandle], next: UInt64)>(([:], 1))

    init(session: Session, options: MountOptions, mounts: [String]) {
        self.session = session
        self.options = options
        self.mounts = mounts
        table = InodeTable(root: options.allMounts ? .mounts : .path(.root(of: options.mount)))
        owner = (getuid(), getgid())
    }

    // MARK: Waiting for the session

    /// Runs `body` as work of the session and waits for it here, on libfuse's thread, at most
    /// the operation timeout: a store that stops answering gives `EIO`, never a hung program
    /// (a local disk's system calls are not cut off: ``run(within:_:)``).
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws(CofferError) -> T) -> Result<T, CofferError> {
        run(within: options.operationTimeout, body)
    }

    /// Waits at most the operation timeout plus a second for each MiB of `size`: what moves a
    /// whole file (a copy of an S3 object made or sent) is given the time its size needs, at 1 MiB/s
    /// at least; a store that stalls is cut off by its own stall timeout first.
    func run<T: Sendable>(moving size: Int64, _ body: @escaping @Sendable () async throws(CofferError) -> T) -> Result<T, CofferError> {
        run(within: options.operationTimeout + Double(max(0, size)) / 1_048_576, body)
    }

    /// Runs `body` as work of the session and waits for it here at most `timeout` seconds.
    ///
    /// The operation runs on the calling thread (``WaitingThreadExecutor``), as far as it does
    /// not wait for something else: a call costs no hand-over between threads. A store's requests
    /// run elsewhere and are cut off at the deadline; a system call on local disk runs here, and,
    /// as for any program, is not (a disk that hangs holds this thread; the loop's others answer).
    private func run<T: Sendable>(within timeout: Double, _ body: @escaping @Sendable () async throws(CofferError) -> T) -> Result<T, CofferError> {
        let executor = WaitingThreadExecutor()
        let result = Mutex<Result<T, CofferError>?>(nil)
        let task = session.start(on: executor) { [executor] in
            let outcome: Result<T, CofferError>
            defer { withExtendedLifetime(executor) {} }
            do throws(CofferError) {
                outcome = .success(try await body())
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
        }
        guard executor.run(within: timeout, isDone: { result.withLock { $0 != nil } }) else {
            task.cancel()
            return .failure(CofferError(.ioError, detail: "the storage did not answer within \(Int(timeout)) s"))
        }
        return result.withLock { $0! }
    }

    /// The item at `path`, at once where the storage answers at once.
    func node(at path: VirtualPath) -> Result<FileNode, CofferError> {
        if pending.hides(path) { return .failure(CofferError(.noSuchFile, path: path)) }
        let session = session
        if let node = try? session.performImmediately(StatItem(path)) { return .success(node) }
        return run { () async throws(CofferError) in try await session.perform(StatItem(path)) }
    }

    // MARK: Held deletions

    /// Moves the held deletions to the trash (`all`: now; otherwise once deletions have been
    /// quiet a moment), each top item one operation.
    func flushDeletions(all: Bool) {
        let session = session
        for path in pending.take(all: all) {
            notifier.noteOwn(path)
            _ = run { () async throws(CofferError) in _ = try await session.perform(DeleteItem(path)) }
            pending.gone(path)
        }
    }

    /// Before a new item takes the name `path`: a held deletion there goes to the trash now.
    func clearHeldDeletion(at path: VirtualPath) {
        guard let held = pending.take(covering: path) else {
            // On its way to the trash already: the new item waits until it is there.
            if pending.hides(path) { deletions.sync {} }
            return
        }
        let session = session
        notifier.noteOwn(held)
        _ = run { () async throws(CofferError) in _ = try await session.perform(DeleteItem(held)) }
    }

    // MARK: Names and attributes

    /// The path of `name` in the folder numbered `parent` (for an item to be made or changed
    /// there, `changing`); an error to answer otherwise.
    func child(_ parent: UInt64, _ name: String, changing: Bool = false) -> Result<VirtualPath, CofferError> {
        if case .mounts? = table.item(parent) {
            // The folder of mounts is made by `coffer`'s options, not by programs.
            if changing { return .failure(CofferError(.readOnly)) }
            guard mounts.contains(name) else { return .failure(CofferError(.noSuchFile)) }
            return .success(.root(of: name))
        }
        // A folder deleted or replaced since the kernel learned its number has no items.
        guard let folder = table.path(parent) else { return .failure(CofferError(.noSuchFile, detail: "stale")) }
        let path = Result { () throws(CofferError) in try folder.appending(name) }
        if changing, case .success(let changed) = path { notifier.noteOwn(changed) }
        return path
    }

    /// The attributes the kernel is given for `node`, numbered `number`: the mounting user's,
    /// with the permissions the storage keeps (0644 and 0755 where it keeps none). A link, a
    /// pipe, a socket or a device is shown as what it is; the mount is `nodev`, so no device
    /// opens through it.
    func attributes(_ node: FileNode, number: UInt64) -> stat {
        var facts = stat()
        facts.st_ino = ino_t(number)
        let type: mode_t = switch node.special {
        case .symbolicLink?: S_IFLNK
        case .fifo?: S_IFIFO
        case .socket?: S_IFSOCK
        case .device?: S_IFREG
        case nil: node.kind == .file ? S_IFREG : S_IFDIR
        }
        let permissions = node.permissions.map { mode_t($0) & 0o7777 } ?? (type == S_IFDIR ? 0o755 : 0o644)
        facts.st_mode = type | (node.special == .device ? 0 : permissions)
        facts.st_nlink = type == S_IFDIR ? 2 : 1
        facts.st_uid = owner.user
        facts.st_gid = owner.group
        facts.st_size = off_t(type == S_IFLNK ? Int64(node.linkTarget?.utf8.count ?? 0) : node.size)
        facts.st_blksize = 4096
        facts.st_blocks = blkcnt_t((facts.st_size + 511) / 512)
        let modified = Self.time(node.knownModificationDate ?? Date(timeIntervalSince1970: 0))
        facts.st_mtim = modified
        facts.st_ctim = modified
        facts.st_atim = node.accessDate.map(Self.time) ?? modified
        return facts
    }

    /// The attributes of the root of `--all`: a folder nobody writes in.
    func mountsFolderAttributes() -> stat {
        var facts = stat()
        facts.st_ino = 1
        facts.st_mode = S_IFDIR | 0o555
        facts.st_nlink = 2
        facts.st_uid = owner.user
        facts.st_gid = owner.group
        return facts
    }

    private static func time(_ date: Date) -> timespec {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return timespec(tv_sec: Int(seconds), tv_nsec: Int(((date.timeIntervalSince1970 - seconds) * 1e9).rounded(.down)))
    }

    // MARK: Open files

    /// Keeps `handle` open under a new number for the kernel.
    func open(_ handle: OpenHandle) -> UInt64 {
        handles.withLock { handles in
            let number = handles.next
            handles.next += 1
            handles.open[number] = handle
            return number
        }
    }

    func handle(_ number: UInt64) -> OpenHandle? {
        number == COFFER_FUSE_NO_HANDLE ? nil : handles.withLock { $0.open[number] }
    }

    /// Every open file.
    func allHandles() -> [OpenHandle] {
        handles.withLock { Array($0.open.values) }
    }

    /// The open files of `ino`.
    func handles(of ino: UInt64) -> [OpenHandle] {
        handles.withLock { $0.open.values.filter { $0.ino == ino } }
    }

    /// Keeps `handle` open under a new number, as ``open(_:)``, unless it holds a copy on local
    /// disk of a file another handle opened a copy of meanwhile: then the new number shares that
    /// copy, and the handle's own, unchanged, is dropped. The handle kept is returned.
    func openSharing(_ handle: OpenHandle) -> (number: UInt64, handle: OpenHandle) {
        guard let own = handle.stagedCopy else { return (open(handle), handle) }
        let path = table.path(handle.ino)
        let (number, kept) = handles.withLock { handles in
            let number = handles.next
            handles.next += 1
            let other = handles.open.values.firstValue { Self.copy(of: $0, ino: handle.ino, at: path) }
            let kept = other.map { OpenHandle(ino: handle.ino, .updating($0)) } ?? handle
            handles.open[number] = kept
            return (number, kept)
        }
        if kept !== handle {
            own.discard()
        } else if let now = table.path(handle.ino), now != own.destination {
            // Renamed while the copy was being made: it goes where the file went.
            own.noteMoved(from: own.destination, to: now)
        } else if !table.isAttached(handle.ino) {
            own.noteDeleted()   // deleted meanwhile
        }
        return (number, kept)
    }

    /// The copy `handle` holds, when it is one of the file `ino` is at `path` now (not one a
    /// conflict sent elsewhere).
    private static func copy(of handle: OpenHandle, ino: UInt64, at path: VirtualPath?) -> UpdatableFile? {
        guard handle.ino == ino, let copy = handle.stagedCopy, let path, copy.destination == path else { return nil }
        return copy
    }

    /// Opens `ino` again under a new number, sharing the copy on local disk another handle of it
    /// writes (a file of other storage, ``UpdatableFile/isStaged``): every open of such a file
    /// reads and writes one copy while any is open, as every open of a local file reads and
    /// writes the file. `nil` when no handle of `ino` holds a copy.
    func openSharedCopy(of ino: UInt64) -> (number: UInt64, handle: OpenHandle)? {
        let path = table.path(ino)
        return handles.withLock { handles in
            let copy = handles.open.values.firstValue { Self.copy(of: $0, ino: ino, at: path) }
            guard let copy else { return nil }
            let number = handles.next
            handles.next += 1
            let handle = OpenHandle(ino: ino, .updating(copy))
            handles.open[number] = handle
            return (number, handle)
        }
    }

    /// Lets the handle numbered `number` go, closing what it holds unless another handle shares
    /// it (``openSharedCopy(of:)``): a copy is closed with the last of its handles.
    /// With `discarding`, a copy closed so drops what it holds unsent (an open the program gave up on).
    func close(_ number: UInt64, discarding: Bool = false) {
        let (handle, shared) = handles.withLock { handles -> (OpenHandle?, Bool) in
            guard let handle = handles.open.removeValue(forKey: number) else { return (nil, false) }
            guard let copy = handle.stagedCopy else { return (handle, false) }
            return (handle, handles.open.values.contains { $0.stagedCopy === copy })
        }
        if shared {
            handle?.detach()
        } else {
            if discarding, let copy = handle?.stagedCopy { copy.discard() }
            handle?.close()
        }
    }

    /// Closes every open file (the mount is ending), sending what copies hold unsent first.
    func closeAll() {
        let all = handles.withLock { handles in
            defer { handles.open = [:] }
            return Array(handles.open.values)
        }
        for handle in all {
            if case .updating(let file)? = handle.current { _ = send(file) }
            handle.close()
        }
    }

    // MARK: Errors

    /// The errno the kernel is given for `error`: the system's own where the error came from a
    /// system call, else the nearest to its kind.
    static func errno(_ error: CofferError) -> Int32 {
        if let code = error.errno, code > 0, error.kind != .cancelled { return code }
        switch error.kind {
        case .noSuchFile, .unknownMount, .notFoundUpload: return ENOENT
        case .fileExists: return EEXIST
        case .notADirectory: return ENOTDIR
        case .isADirectory: return EISDIR
        case .directoryNotEmpty: return ENOTEMPTY
        case .noPermission, .hostAccessDenied, .typeNotAllowed: return EACCES
        case .outOfSpace: return ENOSPC
        case .invalidName: return error.detail == FileName.Problem.tooLong.rawValue ? ENAMETOOLONG : EINVAL
        case .outsideSandbox: return EACCES
        case .readOnly: return EROFS
        case .cancelled: return EINTR
        case .unsupported: return ENOTSUP
        case .invalidOperation, .invalidArgument: return EINVAL
        case .tooLarge: return EFBIG
        case .changedSinceRead: return ESTALE
        default: return EIO
        }
    }
}

/// The settings of a mount, from `coffer mount`'s options.
public struct MountOptions: Sendable {
    /// The mount shown (`files` unless `--mount NAME`), when not ``allMounts``.
    public var mount: String = VirtualPath.defaultMount
    /// Every visible mount as a folder of the root (`--all`).
    public var allMounts = false
    /// How long the kernel trusts an item's attributes, and a name, without asking again, in
    /// seconds. Changes made elsewhere are sent to the kernel at once where the storage can be
    /// watched (a local folder); elsewhere (S3) they show after at most this long.
    public var attributeTimeout: Double = 1
    /// The longest any call waits for the storage before it fails with `EIO`, in seconds.
    public var operationTimeout: Double = 60
    /// How many of libfuse's threads serve calls.
    public var threads = 4
    /// Patterns of scratch files beyond ``ScratchNames/standard`` (`--scratch '*.tmp'`): deleted
    /// for good, never to the trash.
    public var scratchNames: [String] = []

    /// The defaults: `files`, one-second caches, a minute's patience, four threads.
    public init() {}
}
