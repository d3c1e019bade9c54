public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A ``MessageConnection`` over a byte stream — standard input and output, or a connected
/// Unix-domain socket — with LSP or newline-delimited framing, detected from the first byte
/// unless forced.
public final class StreamConnection: MessageConnection {
    /// Used only by the thread that calls ``receive()``.
    private nonisolated(unsafe) let reader: FrameReader
    private let writer: FrameWriter
    private let input: Int32
    private let output: Int32
    /// A socket's descriptor, owned (closed at the end) and shut down by ``close()``.
    private let socket: Int32?
    /// Answers the reader sent while more requests were already waiting in the input, and
    /// what to call once they are written: they go out together, in one `write`, before the
    /// reader next waits for input (or when they grow large). Used only by the reader.
    private nonisolated(unsafe) var readerBatch = Data()
    private nonisolated(unsafe) var readerBatchCompletions: [@Sendable () -> Void] = []
    private static let readerBatchLimit = 64 << 10
    /// The framing last given to the writer (the reader's, once it has decided it).
    private nonisolated(unsafe) var writerFraming: Framing?

    /// Standard input and output (descriptors 0 and 1), which the process owns.
    /// `maxUnsentBytes`: answers a client may leave unread (``UnsentBound``).
    public static func standardIO(framing: Framing?, maxMessageBytes: Int, maxUnsentBytes: Int = 64 << 20) -> StreamConnection {
        StreamConnection(input: 0, output: 1, socket: nil, framing: framing, maxMessageBytes: maxMessageBytes,
                         maxUnsentBytes: maxUnsentBytes)
    }

    /// A connected socket, which the connection owns from now on.
    public static func socket(_ fd: Int32, framing: Framing?, maxMessageBytes: Int, maxUnsentBytes: Int = 64 << 20)
        -> StreamConnection {
        StreamConnection(input: fd, output: fd, socket: fd, framing: framing, maxMessageBytes: maxMessageBytes,
                         maxUnsentBytes: maxUnsentBytes)
    }

    private init(input: Int32, output: Int32, socket: Int32?, framing: Framing?, maxMessageBytes: Int, maxUnsentBytes: Int) {
        self.input = input
        self.output = output
        self.socket = socket
        reader = FrameReader(fd: input, framing: framing, maxMessageBytes: maxMessageBytes)
        writer = FrameWriter(fd: output, maxUnsentBytes: maxUnsentBytes)
    }

    deinit {
        writer.close()
        // The writer may still be in a `write` on the socket: the descriptor goes only after it.
        writer.waitUntilStopped()
        if let socket { _ = Glibc.close(socket) }
    }

    public func receive() -> IncomingFrame {
        if !reader.hasWholeMessageBuffered { flushReaderBatch() }
        let frame = reader.next()
        if let framing = reader.framing, framing != writerFraming {
            writer.use(framing)
            writerFraming = framing
        }
        if case .end = frame { flushReaderBatch() }
        switch frame {
        case .message(let body): return .message(body)
        case .tooLarge(let size): return .tooLarge(size)
        case .malformed(let problem): return .malformed(problem)
        case .end(let truncated):
            if truncated { return .end(.truncated) }
            return peerHasClosed() ? .end(.hungUp) : .end(.finished)
        }
    }

    /// After the end of a socket's input: whether the peer closed it altogether (it reads
    /// no more), rather than only finishing its sending with `shutdown(SHUT_WR)`. The end
    /// of a pipe is always a finish: a client may close its end and still read answers.
    private func peerHasClosed() -> Bool {
        guard let socket else { return false }
        var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        guard poll(&poller, 1, 0) >= 0 else { return true }
        return poller.revents & Int16(POLLHUP | POLLERR) != 0
    }

    public func send(_ body: Data, whenWritten: (@Sendable () -> Void)?) { writer.send(body, whenWritten: whenWritten) }

    public func sendFromReader(_ body: Data, whenWritten: (@Sendable () -> Void)?) {
        writer.append(body, framedTo: &readerBatch)
        if let whenWritten { readerBatchCompletions.append(whenWritten) }
        if !reader.hasWholeMessageBuffered || readerBatch.count >= Self.readerBatchLimit { flushReaderBatch() }
    }

    public func flushFromReader() { flushReaderBatch() }

    private func flushReaderBatch() {
        guard !readerBatch.isEmpty || !readerBatchCompletions.isEmpty else { return }
        writer.send(frames: readerBatch, completions: readerBatchCompletions, writingHere: true)
        readerBatch = Data()
        readerBatchCompletions = []
    }

    public func flush(then: @escaping @Sendable () -> Void) { writer.send(nil, whenWritten: then) }

    public func onHangUp(_ handler: @escaping @Sendable () -> Void) { writer.onHangUp(handler) }

    public func stopReceiving() {
        if let socket { _ = shutdown(socket, Int32(SHUT_RD)) }
    }

    public func close() {
        // A socket can be woken: a blocked read returns the end, a blocked write fails.
        if let socket { _ = shutdown(socket, Int32(SHUT_RDWR)) }
        writer.close()
    }
}
