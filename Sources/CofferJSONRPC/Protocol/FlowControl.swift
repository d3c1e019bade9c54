import Dispatch
import Synchronization

/// How much one connection may have outstanding: requests read and not yet answered
/// (running, or waiting for one of the ``RequestSlots``), and the bytes of those requests
/// and of answers not yet written.
///
/// The reader waits here before taking on another request, so a client that floods the
/// server, or stops reading its answers, holds up only itself: its input stays in its own
/// socket buffer, and memory stays bounded whatever it sends. The bound is far above the
/// number that run at once, so a `$/cancelRequest` behind a crowd of requests is still read
/// promptly. A request is always admitted when nothing else is outstanding, however large.
/// Counting is a lock; only a reader that has to wait sleeps, and only then is it woken.
final class FlowControl: Sendable {
    private struct State {
        var requests = 0
        var bytes = 0
        var readerWaiting = false
    }

    private let maxRequests: Int
    private let maxBytes: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    init(maxRequests: Int, maxBytes: Int) {
        self.maxRequests = max(1, maxRequests)
        self.maxBytes = maxBytes
    }

    /// Waits (the reader's thread, never the cooperative pool) until a request of `size`
    /// bytes may be taken on, then counts it.
    func admit(_ size: Int) {
        while true {
            let admitted = state.withLock { state -> Bool in
                guard state.requests > 0 && (state.requests >= maxRequests || state.bytes + size > maxBytes) else {
                    state.requests += 1
                    state.bytes += size
                    return true
                }
                state.readerWaiting = true
                return false
            }
            if admitted { return }
            wake.wait()
        }
    }

    /// Counts an answer's bytes until it is written.
    func add(_ size: Int) {
        state.withLock { $0.bytes += size }
    }

    /// A request is answered and its answer written: frees it and `size` bytes.
    func release(_ size: Int) {
        let wakeReader = state.withLock { state -> Bool in
            state.requests -= 1
            state.bytes -= size
            defer { state.readerWaiting = false }
            return state.readerWaiting
        }
        if wakeReader { wake.signal() }
    }
}
