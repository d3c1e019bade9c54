import Synchronization

/// The places for requests of one connection that run at once. A request waits for a
/// place in order of arrival; one cancelled while waiting (`$/cancelRequest`, a client
/// gone) stops waiting at once, and never runs.
final class RequestSlots: Sendable {
    private struct State {
        var free: Int
        var next = 0
        var waiting: [(number: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(free: max(1, count))) }

    /// Waits for a place: `true` once there is one, `false` when the task was cancelled first.
    func acquire() async -> Bool {
        // Most of the time a place is free: take it without suspending.
        let taken = state.withLock { state -> Int? in
            guard state.free > 0 && state.waiting.isEmpty else {
                defer { state.next += 1 }
                return state.next
            }
            state.free -= 1
            return nil
        }
        guard let number = taken else { return !Task.isCancelled || releasing() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let granted = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.free > 0 && state.waiting.isEmpty {
                        state.free -= 1
                        return true
                    }
                    state.waiting.append((number, continuation))
                    return nil
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiting.firstIndex(where: { $0.number == number }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(returning: false)
        }
    }

    /// Gives back a place just taken by a task found cancelled; `false`.
    private func releasing() -> Bool {
        release()
        return false
    }

    /// Gives a place back, to the request that waited longest.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}
