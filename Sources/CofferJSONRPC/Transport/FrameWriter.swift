import Dispatch
import CofferRuntime
import Foundation
import Synchronization

/// Writes whole messages to a descriptor, one at a time, in the client's framing, from a
/// thread of its own.
///
/// Messages come from many tasks at once; frames queued while a write is under way go out
/// together in the next `write`, which matters when many requests are answered at once.
/// The thread is the connection's own, so a client that stops reading blocks only its own
/// writes, never a thread other clients or the service need. A write that finds the peer
/// gone (`EPIPE`, `ECONNRESET`) makes later sends no-ops and reports the hang-up once.
final class FrameWriter: Sendable {
    private struct Pending {
        var frames = Data()
        var completions: [@Sendable () -> Void] = []
        var writing = false
        var closed = false
        var peerGone = false
        var hangUp: (@Sendable () -> Void)?
    }

    private let fd: Int32
    /// The most bytes queued while a write is stuck (``UnsentBound``).
    private let bound: UnsentBound
    private let framing = Mutex(Framing.ndjson)
    private let condition = NSCondition()
    private nonisolated(unsafe) var pending = Pending()  // guarded by `condition`
    private let stopped = DispatchSemaphore(value: 0)

    init(fd: Int32, maxUnsentBytes: Int = 64 << 20) {
        self.fd = fd
        self.bound = UnsentBound(limit: maxUnsentBytes)
        let thread = Thread { [self] in
            run()
            stopped.signal()
        }
        thread.name = "coffer.rpc.writer"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Set once the reader knows the client's framing.
    func use(_ framing: Framing) { self.framing.withLock { $0 = framing } }

    /// Queues one message body; `nil` queues nothing but `whenWritten`, called once what
    /// was queued before it is written. With `writingHere`, a body is written on the
    /// caller's thread when nothing is queued or being written (one wake-up less per answer);
    /// only a thread that may wait on a slow reader passes it.
    func send(_ body: Data?, whenWritten: (@Sendable () -> Void)?, writingHere: Bool = false) {
        send(frames: body.map(framed) ?? Data(), completions: whenWritten.map { [$0] } ?? [], writingHere: writingHere)
    }

    /// `body` in the client's framing.
    func framed(_ body: Data) -> Data {
        var frame = Data()
        append(body, framedTo: &frame)
        return frame
    }

    /// Appends `body` in the client's framing to `frames`.
    func append(_ body: Data, framedTo frames: inout Data) {
        if framing.withLock({ $0 }) == .lsp {
            frames.append(contentsOf: "Content-Length: \(body.count)\r\n\r\n".utf8)
        }
        frames.append(body)
        if framing.withLock({ $0 }) != .lsp { frames.append(UInt8(ascii: "\n")) }
    }

    /// Queues frames already framed, written together, and what to call once they are.
    func send(frames: Data, completions: [@Sendable () -> Void], writingHere: Bool) {
        condition.lock()
        let dropped = pending.peerGone || pending.closed
        if writingHere && !dropped && !pending.writing && pending.frames.isEmpty && pending.completions.isEmpty {
            pending.writing = true
            condition.unlock()
            finishWrite(written: frames.isEmpty || writeAll(frames), completions: completions)
            return
        }
        var overflow: [@Sendable () -> Void] = []
        var hangUp: (@Sendable () -> Void)?
        if !dropped {
            pending.frames.append(frames)
            pending.completions += completions
            if bound.isExceeded(unsent: pending.frames.count) {
                // The client reads none of its answers: it is let go, and what waited for it dropped.
                overflow = pending.completions
                pending.frames = Data()
                pending.completions = []
                pending.peerGone = true
                hangUp = pending.hangUp
                pending.hangUp = nil
            }
            condition.broadcast()
        }
        condition.unlock()
        if dropped { for completion in completions { completion() } }
        if hangUp != nil || !overflow.isEmpty {
            bound.report()
            // A socket's stuck write ends now; a pipe's stays the client's to unblock.
            _ = shutdown(fd, Int32(SHUT_RDWR))
            for completion in overflow { completion() }
            hangUp?()
        }
    }

    func onHangUp(_ handler: @escaping @Sendable () -> Void) {
        condition.lock()
        let gone = pending.peerGone
        if !gone { pending.hangUp = handler }
        condition.unlock()
        if gone { handler() }
    }

    /// Stops the thread once what is queued is written.
    func close() {
        condition.lock()
        pending.closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the thread has ended (after ``close()``, once what was queued is written).
    func waitUntilStopped() {
        stopped.wait()
        stopped.signal()
    }

    private func run() {
        while true {
            condition.lock()
            while pending.writing || (pending.frames.isEmpty && pending.completions.isEmpty && !pending.closed) {
                condition.wait()
            }
            if pending.frames.isEmpty && pending.completions.isEmpty {
                condition.unlock()
                return
            }
            let frames = pending.frames
            let completions = pending.completions
            pending.frames = Data()
            pending.completions = []
            pending.writing = true
            condition.unlock()
            bound.progressed()

            finishWrite(written: frames.isEmpty || writeAll(frames), completions: completions)
        }
    }

    /// After a write by either thread: completions run, a peer found gone is noted (and
    /// what was queued dropped), and the writer thread may go on.
    private func finishWrite(written: Bool, completions: [@Sendable () -> Void]) {
        for completion in completions { completion() }

        condition.lock()
        pending.writing = false
        var hangUp: (@Sendable () -> Void)?
        if !written && !pending.peerGone {
            pending.peerGone = true
            hangUp = pending.hangUp
            pending.hangUp = nil
        }
        let dropped = pending.peerGone ? pending.completions : []
        if pending.peerGone {
            pending.frames = Data()
            pending.completions = []
        }
        // The writer thread sleeps until there is something for it: waking it for nothing
        // would cost a context switch per answer written on the reader's thread.
        if !pending.frames.isEmpty || !pending.completions.isEmpty || pending.closed { condition.broadcast() }
        condition.unlock()
        for completion in dropped { completion() }
        hangUp?()
    }

    /// `false` when the peer is gone.
    private func writeAll(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            WriteAll.bytes(raw, using: { write(fd, $0, $1) }, progressed: { bound.progressed() }) == 0
        }
    }
}

/// How long a connection may hold answers its client does not read: past `limit` bytes
/// queued behind a write that has not moved for `stall`, or past twice `limit` at all, the
/// connection is closed with a line on standard error. A client that reads, however slowly,
/// keeps the write moving and is never cut off below twice the limit.
public final class UnsentBound: Sendable {
    private let limit: Int
    private let stall: Duration
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    /// When the write last moved, as nanoseconds since `start`.
    private let lastProgress = Atomic<Int64>(0)

    public init(limit: Int, stall: Duration = .seconds(5)) {
        self.limit = limit
        self.stall = stall
        start = clock.now
    }

    private var elapsed: Int64 {
        let (seconds, attoseconds) = (clock.now - start).components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The write moved (or a new one began).
    public func progressed() { lastProgress.store(elapsed, ordering: .relaxed) }

    /// Whether `unsent` bytes waiting is past what the client may leave unread.
    public func isExceeded(unsent: Int) -> Bool {
        guard unsent > limit else { return false }
        if unsent > 2 * limit { return true }
        let (seconds, attoseconds) = stall.components
        let stallNanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return elapsed - lastProgress.load(ordering: .relaxed) >= stallNanoseconds
    }

    /// Says on standard error why a connection was closed.
    public func report() {
        let text = "coffer: a client read none of its answers while more than \(limit >> 20) MiB of them waited: "
            + "its connection is closed\n"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
