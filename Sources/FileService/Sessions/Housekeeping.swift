import Foundation
import Synchronization

/// The background work a service keeps going while someone stays: each feature's upkeep
/// (``ServiceFeature/keepUp(_:)``) — the search index kept live by a watch of its mount, a
/// sweep that discards uploads abandoned for an hour, the thumbnail cache trimmed to its
/// limits at the start and every hour…
///
/// Long-lived sessions retain it while they are open (and a server that takes connections
/// for its whole life, so the index is not dropped between clients); the last release
/// stops it.
final class Housekeeping: Sendable {
    private struct State {
        var holders = 0
        var work: [Task<Void, Never>] = []
        /// Releases that let go of the last hold and still wait for their work to end: the
        /// features are stopped once, after the last of them.
        var ending = 0
    }

    private let state = Mutex(State())

    func retain(_ service: FileService) {
        state.withLock { state in
            state.holders += 1
            guard state.holders == 1 else { return }
            state.work = service.features.all.map { feature in Task { await feature.keepUp(service) } }
        }
    }

    /// Stops the work when this was the last holder, once the start it began has
    /// finished (so the index is not left watching after being told to stop).
    func release(_ service: FileService) async {
        let stopped = state.withLock { state -> [Task<Void, Never>]? in
            state.holders -= 1
            guard state.holders == 0 else { return nil }
            state.ending += 1
            defer { state.work = [] }
            return state.work
        }
        guard let stopped else { return }
        for task in stopped { task.cancel() }
        for task in stopped { await task.value }
        // Under the lock: a retain that came meanwhile starts again after this, not before; if
        // it came and went, the work it started has ended too before anything is stopped.
        state.withLock { state in
            state.ending -= 1
            if state.holders == 0, state.ending == 0 {
                for feature in service.features.all { feature.stopKeepingUp() }
            }
        }
    }
}

extension FileService {
    /// Keeps the search index live and abandoned uploads swept until the matching
    /// ``releaseBackgroundWork()``, with or without sessions open: for a server that serves
    /// one client after another. Long-lived sessions do this themselves.
    public func retainBackgroundWork() { housekeeping.retain(self) }

    /// Lets go of one hold taken by ``retainBackgroundWork()``. When it was the last (no
    /// long-lived session open either), the features' upkeep is cancelled and waited for,
    /// then each feature's ``ServiceFeature/stopKeepingUp()`` runs.
    public func releaseBackgroundWork() async { await housekeeping.release(self) }
}
