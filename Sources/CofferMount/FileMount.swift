import CCofferFUSE
public import CofferCore
import CofferRuntime
public import FileService
import Foundation
import Synchronization

/// Coffer's file space as a file system of this machine (`coffer mount DIR`): every program
/// opens its files as files, and still gets what Coffer gives — deleting moves to the trash,
/// a rename over a file keeps the replaced one as a version, each change is audited and
/// undoable. Served through libfuse 3's low-level interface, loaded when a mount is first made.
///
/// ```swift
/// let mount = try FileMount(service: service, at: "/home/me/Coffer")
/// Thread { _ = mount.serve() }.start()   // until stopped or unmounted
/// // …
/// mount.stop()                             // unmounts; serve() returns
/// ```
public final class FileMount: Sendable {
    /// Where it is mounted.
    public let directory: String
    private let system: MountFileSystem
    private let session: Session
    // A pointer, kept as its address: libfuse's session, until `serve` frees it (then 0).
    private let fuse: Mutex<UInt>

    /// Mounts the file space on `directory`, an empty folder (a dead mount left there by a
    /// killed `coffer mount` is cleared first).
    /// - Throws: `unsupported` when libfuse 3 cannot be loaded; `unknownMount` for a mount
    ///   the service does not have; `noSuchFile` or `notADirectory` for `directory`;
    ///   `noPermission` when the system refuses the mount.
    public init(service: FileService, at directory: String, options: MountOptions = MountOptions()) throws(CofferError) {
        guard coffer_fuse_available() != 0 else {
            throw CofferError(.unsupported, detail: "libfuse 3 (libfuse3.so.3) could not be loaded: \(String(cString: coffer_fuse_load_error()))")
        }
        let visible = service.mounts.filter(\.isVisible).map(\.name)
        if !options.allMounts, !service.mounts.contains(where: { $0.name == options.mount }) {
            throw CofferError(.unknownMount, detail: options.mount)
        }
        FileMount.clearDeadMount(at: directory)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder) else {
            throw CofferError(.noSuchFile, detail: directory)
        }
        // (The kernel would mount over a file as well.)
        guard isFolder.boolValue else { throw CofferError(.notADirectory, detail: directory) }
        // The `mount` row of the defaults, with the user's own scratch files added.
        var defaults = FrontEndDefaults.mount
        if !options.scratchNames.isEmpty { defaults.scratchNames = try ScratchNames(ScratchNames.standard + options.scratchNames) }
        session = try service.openSession(SessionOptions(frontEnd: "mount", language: .english, isLongLived: true, defaults: defaults))
        system = MountFileSystem(session: session, options: options, mounts: visible)
        self.directory = directory
        var ops = MountCallbacks.table
        var settings = coffer_fuse_settings()
        let context = Unmanaged.passUnretained(system).toOpaque()
        let options = ["fsname=coffer", "subtype=coffer", "nodev", "nosuid"]
        var error = [CChar](repeating: 0, count: 512)
        let made = options.withCStringArray { list in
            coffer_fuse_mount(directory, list, &ops, &settings, context, &error, error.count)
        }
        guard let made else {
            let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let session = session
            Task { await session.close() }
            throw CofferError(message.contains("ermission") ? .noPermission : .ioError, detail: message)
        }
        fuse = Mutex(UInt(bitPattern: made))
        system.notifier.start(session: made)
    }

    /// Serves the kernel's calls until ``stop()`` or an unmount from outside (`fusermount3 -u`),
    /// then unmounts and closes what was open. Call it once, on a thread that may block.
    /// Returns 0, or the errno of a failure to read from the kernel.
    public func serve() -> Int32 {
        let session = OpaquePointer(bitPattern: fuse.withLock { $0 })
        // Held deletions go to the trash once deletions pause (``PendingDeletes``).
        let system = system
        let queue = system.deletions
        let flusher = DispatchSource.makeTimerSource(queue: queue)
        flusher.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        flusher.setEventHandler { system.flushDeletions(all: false) }
        flusher.resume()
        // Changes made elsewhere reach the kernel's caches at once (storage that cannot be
        // watched, S3, keeps to the cache timeout). The watches are set up beside the loop, so
        // a large tree does not keep the folder from answering meanwhile.
        let watches = WatchIDs()
        let watching = DispatchGroup()
        DispatchQueue.global().async(group: watching) { [self] in watchMounts(into: watches) }
        let result = coffer_fuse_run(session, Int32(max(1, system.options.threads)))
        for id in watches.end() { _ = self.session.unwatch(id) }
        // (Unmounted from outside, the kernel waits on no notification any more; stopped by
        // `stop()`, they ended while calls were still answered.)
        let quiet = system.notifier.stop(waiting: .now() + 5)
        _ = watching.wait(timeout: .now() + 5)
        flusher.cancel()
        queue.sync {}   // a flush under way ends first
        // A stop asked from now on finds nothing to stop.
        fuse.withLock { $0 = 0 }
        // A notification still stuck in the kernel uses the session: it is not freed under it.
        if quiet { coffer_fuse_unmount_and_destroy(session) }
        system.flushDeletions(all: true)
        system.closeAll()
        return result < 0 ? -result : 0
    }

    /// Watches the mounts shown, keeping the ids in `watches` (a watch made after the loop
    /// ended is stopped at once); a mount whose storage cannot be watched has none.
    private func watchMounts(into watches: WatchIDs) {
        let (session, system) = (self.session, self.system)
        let roots = system.options.allMounts ? system.mounts.map { VirtualPath.root(of: $0) } : [.root(of: system.options.mount)]
        for root in roots {
            let started = system.run { () async throws(CofferError) -> String in
                try await session.watch(root) { _, changes in system.notifier.invalidate(changes, in: system.table) }
            }
            guard case .success(let id) = started else { continue }
            if !watches.keep(id) { _ = session.unwatch(id) }
        }
    }

    /// Ends ``serve()`` soon; callable from any thread, and returns at once.
    public func stop() {
        // Notifications end first, while calls are still answered: one may be waiting for a
        // folder's lock that a program's call holds until it is answered, which every call is
        // within its timeout.
        DispatchQueue.global().async { [self] in
            system.notifier.stop(waiting: .now() + system.options.operationTimeout + 5)
            fuse.withLock { session in
                if session != 0 { coffer_fuse_exit(OpaquePointer(bitPattern: session)) }
            }
        }
    }

    /// Sends what an earlier mount of this container wrote to files of an S3 mount but was
    /// stopped (killed) before it sent (`FinishPendingSaves`): call it once the mount is
    /// served, alongside. The files sent, and the errors of those that stay for the next time.
    public func finishPendingSaves() async -> [Result<FileNode, CofferError>] {
        do {
            return try await session.perform(FinishPendingSaves())
        } catch {
            return [.failure(error)]
        }
    }

    /// Closes the session the mount's calls were operations of (after ``serve()`` returned).
    public func close() async {
        await session.close()
    }

    /// A folder where a killed mount left its dead end (`ENOTCONN`) is unmounted, lazily, so a
    /// new mount can take it.
    static func clearDeadMount(at directory: String) {
        guard access(directory, F_OK) != 0, errno == ENOTCONN else { return }
        if umount2(directory, Int32(MNT_DETACH)) == 0 { return }
        // Not root: fusermount3, setuid, unmounts what the user mounted.
        if let child = try? ChildProcess.start(["fusermount3", "-u", "-z", directory], searchingPath: true),
           child.wait(timeout: .seconds(10)) == nil {
            child.reapWhenEnded()
        }
    }
}

/// The ids of a mount's watches, made beside its loop; those made after it ended are not kept.
private final class WatchIDs: Sendable {
    private let state = Mutex<(ids: [String], ended: Bool)>(([], false))

    /// Keeps `id`; `false` when the loop has ended (the watch is to be stopped at once).
    func keep(_ id: String) -> Bool {
        state.withLock { state in
            if !state.ended { state.ids.append(id) }
            return !state.ended
        }
    }

    /// The loop ended: the watches kept, to stop.
    func end() -> [String] {
        state.withLock { state in
            state.ended = true
            return state.ids
        }
    }
}

extension Array where Element == String {
    /// Runs `body` with the strings as a NULL-terminated list of C strings.
    func withCStringArray<T>(_ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies = map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let list = copies.map { UnsafePointer($0) } + [nil]
        return list.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
