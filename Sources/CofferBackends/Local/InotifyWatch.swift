public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Changes below a folder of the local sandbox, read from inotify.
///
/// Watches are added through descriptors opened beneath the backend's root (the kernel is
/// handed `/proc/self/fd/N`, never a path it would resolve itself), so a link swapped in
/// cannot point a watch outside the sandbox. A folder moved out of the watched tree loses
/// its watches at once, so nothing that happens to it afterwards is reported.
///
/// All state lives on one serial queue; events are coalesced for ``window`` and delivered
/// in batches. Moves are reported as `deleted` at the old path and `created` at the new.
final class InotifyWatch: ChangeWatch, @unchecked Sendable {
    /// How long events are gathered before a batch is delivered.
    static let window: DispatchTimeInterval = .milliseconds(100)

    private static let mask: UInt32 = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY
        | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_EXCL_UNLINK) | UInt32(IN_ONLYDIR)

    private let backend: LocalSandboxBackend
    private let inotify: Int32
    private let root: VirtualPath
    private let recursive: Bool
    /// When watching one file: its name in the watched folder.
    private let onlyName: String?
    private let queue = DispatchQueue(label: "coffer.watch")
    private var source: (any DispatchSourceRead)?
    /// The folder each watch descriptor stands for.
    private var folders: [Int32: VirtualPath] = [:]
    private var pending: ChangeCoalescer
    /// An arrival (`IN_MOVED_TO`) not reported yet: the next event may make it half of a swap.
    private var heldArrival: (wd: Int32, path: VirtualPath, isFolder: Bool)?
    private var flushScheduled = false
    /// Held while a batch is delivered, so `cancel()` returning means no further calls.
    private let delivery = NSRecursiveLock()
    private var cancelled = false
    private let handler: @Sendable ([FileChange]) -> Void

    /// Starts watching `folder` (and its subfolders when `recursive`); with `onlyName`,
    /// only changes to that entry of `folder` are reported.
    init(backend: LocalSandboxBackend, folder: VirtualPath, recursive: Bool, onlyName: String?, reportingPassing: Bool = false,
         handler: @escaping @Sendable ([FileChange]) -> Void) throws(CofferError) {
        pending = ChangeCoalescer(reportingPassing: reportingPassing)
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            // EMFILE here is the per-user limit of inotify instances.
            throw CofferError.lastSystemError("inotify_init1", path: folder)
        }
        self.backend = backend
        self.inotify = fd
        self.root = folder
        self.recursive = recursive
        self.onlyName = onlyName
        self.handler = handler
        let added = queue.sync { Result { () throws(CofferError) in try addTree(folder, initial: true) } }
        if case .failure(let error) = added {
            Glibc.close(fd)
            throw error
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { Glibc.close(fd) }
        self.source = source
        source.resume()
    }

    func cancel() {
        delivery.withLock { cancelled = true }
        queue.async { [self] in
            source?.cancel()
            source = nil
            folders.removeAll()
        }
    }

    deinit {
        source?.cancel()
    }

    // MARK: Watches (on `queue`)

    /// Adds a watch for `folder` and, when recursive, for every folder below it.
    private func addTree(_ folder: VirtualPath, initial: Bool) throws(CofferError) {
        let descriptor: Descriptor
        do {
            descriptor = try backend.openFolder(at: folder)
        } catch {
            if initial { throw error }
            return  // gone again already; its deletion will be reported
        }
        let wd = inotify_add_watch(inotify, "/proc/self/fd/\(descriptor.raw)", Self.mask)
        guard wd >= 0 else {
            if initial {
                // ENOSPC: the per-user limit of watches (fs.inotify.max_user_watches).
                let code = errno
                throw CofferError(code == ENOSPC ? .tooLarge : .ioError, path: folder, detail: "inotify", errno: code)
            }
            return
        }
        folders[wd] = folder
        guard recursive else { return }
        guard let entries = try? backend.entriesSync(in: descriptor, at: folder) else { return }
        for entry in entries where entry.kind == .folder {
            try addTree(folder.appending(trustedName: entry.name), initial: initial)
        }
    }

    /// Drops the watches of `folder` and everything below it.
    private func removeTree(_ folder: VirtualPath) {
        for (wd, path) in folders where path == folder || folder.contains(path) {
            inotify_rm_watch(inotify, wd)
            folders[wd] = nil
        }
    }

    // MARK: Events (on `queue`)

    private func readEvents() {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(inotify, buffer, capacity)
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let wd = buffer.load(fromByteOffset: offset, as: Int32.self)
                let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let name = length > 0
                    ? String(validatingCString: (buffer + offset + 16).assumingMemoryBound(to: CChar.self)) : nil
                handle(wd: wd, mask: mask, name: name, hasName: length > 0)
                offset += 16 + length
            }
        }
        releaseHeldArrival()
        scheduleFlush()
    }

    private func handle(wd: Int32, mask: UInt32, name: String?, hasName: Bool) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: tell the client to look again at the whole watched folder.
            pending.add(FileChange(path: root, kind: .changed))
            return
        }
        guard let folder = folders[wd] else { return }
        if mask & UInt32(IN_IGNORED) != 0 { folders[wd] = nil; return }
        guard hasName else {
            // The folder itself went away; its parent's watch reports it, except for the root.
            if folder == root, mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0, onlyName == nil {
                pending.add(FileChange(path: root, kind: .deleted))
            }
            return
        }
        // Names that are not UTF-8 cannot be addressed by a virtual path; partial writes
        // are Coffer's own and never visible.
        guard let name, !PartialName.isPartial(name), onlyName.map({ $0 == name }) ?? true
        else { return }
        let path = folder.appending(trustedName: name)
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        // A swap (`RENAME_EXCHANGE`, how a replace puts a new file in place) moves an item to
        // the name and at once the one that was there away from it: the name still holds a
        // file, now another one. That is a change, not a creation undone. So an arrival is held
        // until the next event (or the end of the read) says whether a departure pairs with it.
        if let held = heldArrival {
            heldArrival = nil
            if mask & UInt32(IN_MOVED_FROM) != 0, held.wd == wd, held.path == path {
                pending.add(FileChange(path: path, kind: .changed))
                return
            }
            arrive(held.path, isFolder: held.isFolder)
        }
        if mask & UInt32(IN_MOVED_TO) != 0 {
            heldArrival = (wd, path, isFolder)
            return
        }
        if mask & UInt32(IN_CREATE) != 0 {
            if isFolder && recursive { try? addTree(path, initial: false) }
            pending.add(FileChange(path: path, kind: .created))
        } else if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
            if isFolder { removeTree(path) }
            pending.add(FileChange(path: path, kind: .deleted))
        } else if mask & UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB) != 0 {
            pending.add(FileChange(path: path, kind: .changed))
        }
    }

    /// An item that appeared at `path`.
    private func arrive(_ path: VirtualPath, isFolder: Bool) {
        if isFolder && recursive { try? addTree(path, initial: false) }
        pending.add(FileChange(path: path, kind: .created))
    }

    /// Reports the arrival held back to see whether it was half of a swap.
    private func releaseHeldArrival() {
        guard let held = heldArrival else { return }
        heldArrival = nil
        arrive(held.path, isFolder: held.isFolder)
    }

    private func scheduleFlush() {
        guard !pending.isEmpty, !flushScheduled else { return }
        flushScheduled = true
        queue.asyncAfter(deadline: .now() + Self.window) { [weak self] in self?.flush() }
    }

    private func flush() {
        flushScheduled = false
        let changes = pending.drain()
        guard !changes.isEmpty else { return }
        delivery.withLock {
            if !cancelled { handler(changes) }
        }
    }
}

extension LocalSandboxBackend: WatchableBackend {
    public func watch(_ path: VirtualPath, recursive: Bool, reportingPassing: Bool,
                      handler: @escaping @Sendable ([FileChange]) -> Void) async throws -> any ChangeWatch {
        try await BlockingIO.run { _ throws(CofferError) in
            let node = try self.nodeSync(at: path)
            if node.kind == .folder || (node.kind == .package && node.special == nil) {
                return try InotifyWatch(backend: self, folder: path, recursive: recursive, onlyName: nil,
                                        reportingPassing: reportingPassing, handler: handler)
            }
            guard let parent = path.parent else { throw CofferError(.invalidOperation, path: path) }
            return try InotifyWatch(backend: self, folder: parent, recursive: false, onlyName: path.name,
                                    reportingPassing: reportingPassing, handler: handler)
        }
    }
}
