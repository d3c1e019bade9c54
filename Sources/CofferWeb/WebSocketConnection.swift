import CCivetWeb
import CofferJSONRPC
import Foundation
import Synchronization

/// One WebSocket as the JSON-RPC server's transport: each text message is one JSON-RPC
/// message. CivetWeb hands frames in on its thread for the connection; answers are written
/// by a thread of the connection's own, in order, so a slow browser never holds up the service.
final class WebSocketConnection: MessageConnection, @unchecked Sendable {
    /// CivetWeb's connection; only used while it is open (`closed` says when it is not).
    private let connection: UnsafeMutableRawPointer
    private let inbox = InProcessConnection.Channel()
    /// What the writer sends, in order; an empty message only calls its callback (a flush).
    private let outbox = InProcessConnection.Channel()
    /// One callback per message in the outbox, in the same order.
    private let written = Mutex<[(@Sendable () -> Void)?]>([])
    private let maxMessageBytes: Int
    /// Kept apart: a closure in a tuple behind a generic lock is wrapped again at each access,
    /// and the chain grows with every message.
    private let isClosed = Atomic<Bool>(false)
    private let hangUp = Mutex<(@Sendable () -> Void)?>(nil)
    private let partial = Mutex(Data())
    /// The token it was opened with: a new token ends it.
    let token: String

    init(_ connection: UnsafeMutableRawPointer, token: String, maxMessageBytes: Int) {
        self.connection = connection
        self.token = token
        self.maxMessageBytes = maxMessageBytes
        let writer = Thread { [self] in writeLoop() }
        writer.name = "coffer.web.writer"
        writer.start()
    }

    /// Sends what is queued until the end: a close frame when the server ends it, nothing
    /// when the browser has gone. Every callback is called, written or dropped.
    private func writeLoop() {
        while true {
            let item = outbox.take(timeout: nil)
            guard case .message(let body) = item else {
                if case .finished = item, !isClosed.load(ordering: .sequentiallyConsistent) { _ = coffer_web_ws_send(connection, 8, nil, 0) }
                break
            }
            if !body.isEmpty && !isClosed.load(ordering: .sequentiallyConsistent) {
                let sent = body.withUnsafeBytes { coffer_web_ws_send(connection, 1, $0.baseAddress, $0.count) }
                if sent < 0 { closedByPeer() }
            }
            let callback = written.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            callback?()
        }
        for callback in written.withLock({ callbacks in defer { callbacks = [] }; return callbacks }) { callback?() }
    }

    // MARK: From CivetWeb

    /// A frame came; `final` ends a message. Returns false to close (a message over the limit).
    func received(_ bytes: UnsafeBufferPointer<UInt8>, final: Bool) -> Bool {
        let message: Data? = partial.withLock { partial in
            partial.append(bytes)
            guard final else { return nil }
            defer { partial = Data() }
            return partial
        }
        guard let message else { return true }
        inbox.put(.message(message))
        return true
    }

    /// The socket closed: nothing more comes, and nobody reads what is sent.
    func closedByPeer() {
        isClosed.store(true, ordering: .sequentiallyConsistent)
        let handler = hangUp.withLock { handler in
            defer { handler = nil }
            return handler
        }
        inbox.put(.closed)
        outbox.put(.closed)
        handler?()
    }

    // MARK: MessageConnection

    func receive() -> IncomingFrame {
        switch inbox.take(timeout: nil) {
        case .message(let body): body.count > maxMessageBytes ? .tooLarge(body.count) : .message(body)
        case .finished: .end(.finished)
        case .closed, nil: .end(.hungUp)
        }
    }

    func send(_ body: Data, whenWritten: (@Sendable () -> Void)?) {
        guard !body.isEmpty else { whenWritten?(); return }
        enqueue(body, whenWritten)
    }

    func flush(then: @escaping @Sendable () -> Void) { enqueue(Data(), then) }

    private func enqueue(_ body: Data, _ callback: (@Sendable () -> Void)?) {
        written.withLock { $0.append(callback) }
        outbox.put(.message(body))
    }

    func stopReceiving() { inbox.put(.closed) }

    /// Ends it: a close frame to the browser (after what is queued), which then closes the socket.
    func close() {
        inbox.put(.closed)
        outbox.put(.finished)
    }

    func onHangUp(_ handler: @escaping @Sendable () -> Void) {
        hangUp.withLock { $0 = handler }
        // Gone already: nobody will call it.
        if isClosed.load(ordering: .sequentiallyConsistent), let handler = hangUp.withLock({ stored in
            defer { stored = nil }
            return stored
        }) {
            handler()
        }
    }
}
