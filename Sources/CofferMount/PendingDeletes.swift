import CofferCore
import Foundation
import Synchronization

/// Deletions held back for a moment, so that `rm -r Folder` — which the kernel sends as one
/// `unlink` per file and one `rmdir` per folder, deepest first — leaves *one* restorable folder
/// in the trash instead of an item per file.
///
/// A deleted item is hidden at once (lookups say it is gone, listings leave it out) but stays
/// where it is. A folder whose every item is held goes the same way when it is removed, taking
/// them with it. When no deletion has come for ``quiet`` seconds (or many are held, or the mount
/// ends, or a new item takes a held name), the held items that are not inside another are moved
/// to the trash, each one item. A `kill -9` before that leaves them where they were: nothing is lost.
final class PendingDeletes: Sendable {
    /// How long after the last deletion the held items go to the trash.
    static let quiet: TimeInterval = 1
    /// How many may be held before they go at once.
    static let limit = 10_000

    private struct State {
        var held: Set<VirtualPath> = []
        /// Taken to go to the trash, and still hidden until they are there.
        var going: Set<VirtualPath> = []
        var last = Date.distantPast
    }

    private let state = Mutex(State())

    /// Whether `path`, or a folder it is in, is held (deleted, as far as programs can tell).
    func hides(_ path: VirtualPath) -> Bool {
        state.withLock { state in
            guard !state.held.isEmpty || !state.going.isEmpty else { return false }
            var current: VirtualPath? = path
            while let here = current, !here.isRoot {
                if state.held.contains(here) || state.going.contains(here) { return true }
                current = here.parent
            }
            return false
        }
    }

    /// Holds the deleted item at `path`; `true` when as many are held as should be, so they
    /// should go now.
    func hold(_ path: VirtualPath) -> Bool {
        state.withLock { state in
            state.held.insert(path)
            state.last = Date()
            return state.held.count >= Self.limit
        }
    }

    /// Whether every one of `names` in the folder at `folder` is held.
    func holdsAll(_ names: [String], in folder: VirtualPath) -> Bool {
        state.withLock { state in
            names.allSatisfy { name in
                let path = folder.appending(trustedName: name)
                return state.held.contains(path) || state.going.contains(path)
            }
        }
    }

    /// The held items to move to the trash now — all when `all`, else only once deletions have
    /// been quiet for ``quiet`` seconds — leaving out those inside another held folder (they go
    /// with it). They stay hidden until ``gone(_:)`` says each is in the trash.
    func take(all: Bool) -> [VirtualPath] {
        state.withLock { state in
            guard !state.held.isEmpty, all || Date().timeIntervalSince(state.last) >= Self.quiet else { return [] }
            let held = state.held
            state.held = []
            let tops = held.filter { path in
                var current = path.parent
                while let here = current, !here.isRoot {
                    if held.contains(here) { return false }
                    current = here.parent
                }
                return true
            }
            state.going.formUnion(tops)
            return tops.sorted { $0.description < $1.description }
        }
    }

    /// The item at `path`, taken by ``take(all:)``, is in the trash (or could not go: then it
    /// shows again where it is).
    func gone(_ path: VirtualPath) {
        state.withLock { _ = $0.going.remove(path) }
    }

    /// The folder at `source` was renamed to `destination`: what is held inside it is held there.
    func move(_ source: VirtualPath, to destination: VirtualPath) {
        state.withLock { state in
            let inside = state.held.filter { source.contains($0) }
            guard !inside.isEmpty else { return }
            state.held.subtract(inside)
            for path in inside {
                state.held.insert(VirtualPath(mount: destination.mount,
                                              trustedComponents: destination.components + path.components.dropFirst(source.components.count)))
            }
        }
    }

    /// Takes the held item at `path` or the held folder `path` is in, to move to the trash at
    /// once (a new item is about to take its name); `nil` when none is held there.
    func take(covering path: VirtualPath) -> VirtualPath? {
        state.withLock { state in
            var current: VirtualPath? = path
            while let here = current, !here.isRoot {
                if state.held.contains(here) {
                    state.held = state.held.filter { !here.contains($0) }
                    return here
                }
                current = here.parent
            }
            return nil
        }
    }
}
