import Foundation
import Synchronization

/// A request id as a dictionary key: `$/cancelRequest` names requests by it (see `RequestID`).
enum RequestKey: Hashable, Sendable {
    case integer(Int64)
    case number(Double)
    case string(String)
}

/// The tasks answering requests, so they can be cancelled by id and waited for at the end.
final class InFlightRequests: Sendable {
    private struct Entry {
        var key: RequestKey?
        var task: Task<Void, Never>
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
    }

    private let state = Mutex(State())

    /// Starts `work` as a task, registered before it can finish.
    func start(key: RequestKey?, _ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let serial = state.next
            state.next += 1
            let task = Task { [self] in
                await work()
                self.finish(serial)
            }
            state.entries[serial] = Entry(key: key, task: task)
        }
    }

    private func finish(_ serial: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: serial) }
    }

    /// Cancels the request with this id, if it is still running.
    func cancel(_ key: RequestKey) {
        let tasks = state.withLock { state in state.entries.values.filter { $0.key == key }.map(\.task) }
        for task in tasks { task.cancel() }
    }

    /// The tasks running now.
    func running() -> [Task<Void, Never>] {
        state.withLock { state in state.entries.values.map(\.task) }
    }

    func cancelAll() {
        let tasks = state.withLock { state in state.entries.values.map(\.task) }
        for task in tasks { task.cancel() }
    }

    /// Waits until no request is running.
    func waitForAll() async {
        while true {
            let tasks = state.withLock { state in state.entries.values.map(\.task) }
            if tasks.isEmpty { return }
            for task in tasks { await task.value }
        }
    }
}
