import Synchronization

/// What names an activity of a session, so it can be cancelled by name: a JSON-RPC
/// request's id, say.
public struct ActivityKey: Hashable, Sendable {
    /// The name, unique among the session's activities running at once.
    public let name: String
    /// The key named `name`.
    public init(_ name: String) { self.name = name }
}

/// The tasks a session has started: cancelled by key, all of them at close, and waited for.
final class SessionActivities: Sendable {
    private struct Entry {
        var key: ActivityKey?
        var cancel: @Sendable () -> Void
        var wait: @Sendable () async -> Void
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Starts `work` as a task, registered before it can finish. Once the session is
    /// closing it starts cancelled, so it stops at its first check.
    func start<T: Sendable>(_ key: ActivityKey?, on executor: (any TaskExecutor)? = nil,
                            _ work: @escaping @Sendable () async -> T) -> Task<T, Never> {
        state.withLock { state in
            let serial = state.next
            state.next += 1
            // `finish` takes the lock, so the entry is in place before the task can end.
            let task = Task(executorPreference: executor) { [self] in
                let value = await work()
                finish(serial)
                return value
            }
            state.entries[serial] = Entry(key: key, cancel: { task.cancel() }, wait: { _ = await task.value })
            if state.closed { task.cancel() }
            return task
        }
    }

    private func finish(_ serial: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: serial) }
    }

    /// Cancels the activities started under `key` that are still running.
    func cancel(_ key: ActivityKey) {
        let matching = state.withLock { state in state.entries.values.filter { $0.key == key } }
        for entry in matching { entry.cancel() }
    }

    /// Something that waits for what is running now (not for what starts later).
    func waiterForRunning() -> @Sendable () async -> Void {
        let running = state.withLock { state in state.entries.values.map(\.wait) }
        return { for wait in running { await wait() } }
    }

    /// Cancels everything running now; with `closing`, also everything started from now on.
    func cancelAll(closing: Bool = false) {
        let running = state.withLock { state in
            if closing { state.closed = true }
            return Array(state.entries.values)
        }
        for entry in running { entry.cancel() }
    }

    /// Waits until nothing is running, including what starts meanwhile.
    func waitForAll() async {
        while true {
            let running = state.withLock { state in state.entries.values.map(\.wait) }
            if running.isEmpty { return }
            for wait in running { await wait() }
        }
    }
}
