import Foundation

/// How much one connection may have outstanding: requests read and not yet answered
/// (running, or waiting for one of the ``RequestSlots``), and the bytes of those requests
/// and of answers not yet written.
///
/// The reader waits here before taking on another request, so a client that floods the
/// server, or stops reading its answers, holds up only itself: its input stays in its own
/// socket buffer, and memory stays bounded whatever it sends. The bound is far above the
/// number that run at once, so a `$/cancelRequest` behind a crowd of requests is still read
/// promptly. A request is always admitted when nothing else is outstanding, however large.
final class FlowControl: Sendable {
    private let maxRequests: Int
    private let maxBytes: Int
    private let condition = NSCondition()
    private nonisolated(unsafe) var requests = 0  // guarded by `condition`
    private nonisolated(unsafe) var bytes = 0

    init(maxRequests: Int, maxBytes: Int) {
        self.maxRequests = max(1, maxRequests)
        self.maxBytes = maxBytes
    }

    /// Waits until a request of `size` bytes may be taken on, then counts it.
    func admit(_ size: Int) {
        condition.lock()
        while requests > 0 && (requests >= maxRequests || bytes + size > maxBytes) { condition.wait() }
        requests += 1
        bytes += size
        condition.unlock()
    }

    /// Counts an answer's bytes until it is written.
    func add(_ size: Int) {
        condition.lock()
        bytes += size
        condition.unlock()
    }

    /// A request is answered and its answer written: frees it and `size` bytes.
    func release(_ size: Int) {
        condition.lock()
        requests -= 1
        bytes -= size
        condition.broadcast()
        condition.unlock()
    }
}
