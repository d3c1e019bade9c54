import CCofferFUSE
import CofferCore
import Foundation
import Synchronization

/// Tells the kernel of changes made elsewhere — by another front end, another program, the
/// watcher's findings — so that it drops what it cached of those items at once rather than
/// after `--cache-timeout`: a name (`notify_inval_entry`), and a changed file's attributes and
/// pages (`notify_inval_inode`).
///
/// Changes made through the mount itself are the kernel's own knowledge: a path changed
/// through it within the last two seconds is not reported back, so `git clone` or `rm -r` in
/// the mount do not make the kernel forget what it just learnt.
///
/// The kernel may make a notification wait for a folder's lock, held by a program whose
/// request the mount has yet to answer. Notifications are therefore sent from a queue of their
/// own, never from a call's thread, and ``stop(waiting:)`` lets the one under way finish while
/// the mount still answers calls, before the loop ends.
final class KernelNotifier: Sendable {
    private struct State {
        /// libfuse's session (its address), once mounted; 0 before and after.
        var session: UInt = 0
        var stopped = false
        /// Paths changed through the mount, and when.
        var own: [VirtualPath: ContinuousClock.Instant] = [:]
        /// How many paths `own` may hold before it is pruned again.
        var pruneAt = 4096
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "coffer.mount.notify")
    /// How long a change made through the mount is taken for the kernel's own.
    static let ownWindow: Duration = .seconds(2)

    /// Notifications go to `session` from now on.
    func start(session: OpaquePointer) {
        state.withLock { $0.session = UInt(bitPattern: session) }
    }

    /// The mount itself is changing the item at `path`.
    func noteOwn(_ path: VirtualPath) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.own[path] = now
            // (Pruned here too: storage that is not watched sends no batch that would. After a
            // pruning it may grow to twice what stayed, so that `rm -r` of 10,000 files within
            // the window does not prune at every call.)
            if state.own.count > state.pruneAt {
                state.own = state.own.filter { now - $0.value < Self.ownWindow }
                state.pruneAt = max(4096, 2 * state.own.count)
            }
        }
    }

    /// The changes of `changes` not made through the mount lately.
    private func foreign(_ changes: [FileChange]) -> [FileChange] {
        let now = ContinuousClock.now
        return state.withLock { state in
            state.own = state.own.filter { now - $0.value < Self.ownWindow }
            return changes.filter { state.own[$0.path] == nil }
        }
    }

    /// Tells the kernel of `changes`, whose items `table` numbers.
    func invalidate(_ changes: [FileChange], in table: InodeTable) {
        let foreign = foreign(changes)
        guard !foreign.isEmpty else { return }
        queue.async { [self] in
            for change in foreign {
                // Read for each: `stop` waits for the one under way, and no other starts after it.
                let address = state.withLock { $0.stopped ? 0 : $0.session }
                guard address != 0, let session = OpaquePointer(bitPattern: address) else { return }
                if let parent = change.path.parent, let folder = table.existingNumber(.path(parent)) {
                    _ = change.path.name.withCString { coffer_fuse_notify_inval_entry(session, folder, $0) }
                }
                if change.kind == .changed, let number = table.existingNumber(.path(change.path)) {
                    _ = coffer_fuse_notify_inval_inode(session, number, 0, 0)
                }
            }
        }
    }

    /// Sends nothing more, and waits until `deadline` for what is under way: whether it ended.
    @discardableResult
    func stop(waiting deadline: DispatchTime) -> Bool {
        state.withLock { $0.stopped = true }
        let drained = DispatchSemaphore(value: 0)
        queue.async { drained.signal() }
        return drained.wait(timeout: deadline) == .success
    }
}
