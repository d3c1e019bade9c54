public import Foundation

/// What a connection delivers next.
public enum IncomingFrame: Sendable, Equatable {
    /// One message body.
    case message(Data)
    /// A message longer than the limit, skipped without being kept.
    case tooLarge(Int)
    /// Bytes that are not a frame (a bad header); the connection has resynchronised.
    case malformed(String)
    /// Nothing more will come.
    case end(ConnectionEnd)
}

/// How a connection's input ended.
public enum ConnectionEnd: Sendable, Equatable {
    /// The peer finished sending (end of input, or a half-closed socket) and may still be
    /// reading: what it sent is answered.
    case finished
    /// The input ended inside a message.
    case truncated
    /// The peer is gone: nobody is left to answer, so what it started is cancelled.
    case hungUp
}

/// Framed messages in and out: the seam between the JSON-RPC server and what carries its
/// messages — standard input and output, a Unix-domain socket, an in-process pipe for
/// tests, a WebSocket.
///
/// The server reads with ``receive()`` from a thread of its own (it blocks) and sends from
/// any task (``send(_:whenWritten:)`` never blocks). Framing, if the transport needs any,
/// is the connection's business; the server sees whole message bodies.
public protocol MessageConnection: AnyObject, Sendable {
    /// Waits for the next frame. Called from one thread at a time, never from Swift's
    /// cooperative pool.
    func receive() -> IncomingFrame

    /// Queues one message body to send, whole; `whenWritten` is called once it has been
    /// written, or dropped because the peer is gone.
    func send(_ body: Data, whenWritten: (@Sendable () -> Void)?)

    /// Sends one message body from the thread that calls ``receive()``, which may wait while
    /// it is written: a transport may write it at once when nothing else is queued, instead
    /// of handing it to a writer. (A client that does not read its answers then holds up
    /// only its own reading.) By default, ``send(_:whenWritten:)``.
    func sendFromReader(_ body: Data, whenWritten: (@Sendable () -> Void)?)

    /// Writes what ``sendFromReader(_:whenWritten:)`` may still hold back. The reader calls
    /// it before anything that must come after those answers: a request that is answered
    /// after the ones read before it (`shutdown`), and the end of its reading.
    func flushFromReader()

    /// Calls `then` once everything queued so far is written (or dropped because the peer
    /// is gone). Never blocks.
    func flush(then: @escaping @Sendable () -> Void)

    /// Stops taking messages in: a ``receive()`` waiting returns the end, where the transport
    /// can wake it (a socket can, a pipe cannot). Answers still go out.
    func stopReceiving()

    /// Ends the connection: a ``receive()`` waiting (where the transport can wake it)
    /// returns ``ConnectionEnd/hungUp``, and later sends are dropped.
    func close()

    /// Calls `handler` once, if a write finds the peer gone.
    func onHangUp(_ handler: @escaping @Sendable () -> Void)
}

extension MessageConnection {
    public func send(_ body: Data) { send(body, whenWritten: nil) }

    public func sendFromReader(_ body: Data, whenWritten: (@Sendable () -> Void)?) { send(body, whenWritten: whenWritten) }

    public func flushFromReader() {}
}
