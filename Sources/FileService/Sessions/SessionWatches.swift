import CofferCore
import Synchronization

/// A session's watches, by id (`w1`, `w2`…). All of them stop when the session closes,
/// so nothing keeps watching for a client that has gone away.
final class SessionWatches: Sendable {
    private struct State {
        var next = 1
        var watches: [String: any ChangeWatch] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// A new id, for a watch about to start.
    func reserveID() -> String {
        state.withLock { state in
            defer { state.next += 1 }
            return "w\(state.next)"
        }
    }

    /// Keeps a started watch under `id`; one that starts after close is stopped at once.
    func keep(_ watch: any ChangeWatch, as id: String) {
        let kept = state.withLock { state in
            guard !state.closed else { return false }
            state.watches[id] = watch
            return true
        }
        if !kept { watch.cancel() }
    }

    /// Stops the watch `id`; `false` if there is none.
    func remove(_ id: String) -> Bool {
        guard let watch = state.withLock({ $0.watches.removeValue(forKey: id) }) else { return false }
        watch.cancel()
        return true
    }

    /// Stops every watch; later ones are stopped as soon as they start.
    func closeAll() {
        let watches = state.withLock { state in
            state.closed = true
            defer { state.watches.removeAll() }
            return Array(state.watches.values)
        }
        for watch in watches { watch.cancel() }
    }
}
