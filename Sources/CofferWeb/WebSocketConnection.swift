import CofferHTTPServer
import CofferJSONRPC
import Foundation
import Synchronization

/// One WebSocket as the JSON-RPC server's transport: each text message is one JSON-RPC
/// message. CivetWeb hands frames in on its thread for the connection; answers are written
/// by a thread of the connection's own, in order, so a slow browser never holds up the service.
final class WebSocketConnection: MessageConnection, @unchecked Sendable {
    /// The socket; only used while it is open (`closed` says when it is not).
    private let peer: WebSocketPeer
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
    /// The frames of a message begun and not finished; `nil` between messages.
    private let partial = Mutex<Data?>(nil)
    /// Bytes queued and not yet sent, and how long a browser may leave them unread.
    private let unsent = Atomic<Int>(0)
    private let bound: UnsentBound
    /// The token it was opened with: a new token ends it.
    let token: String

    init(_ peer: WebSocketPeer, token: String, maxMessageBytes: Int, maxUnsentBytes: Int) {
        self.peer = peer
        self.token = token
        self.maxMessageBytes = maxMessageBytes
        self.bound = UnsentBound(limit: maxUnsentBytes)
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
                if case .finished = item, !isClosed.load(ordering: .sequentiallyConsistent) { peer.close() }
                break
            }
            bound.progressed()
            if !body.isEmpty && !isClosed.load(ordering: .sequentiallyConsistent) {
                let sent = body.withUnsafeBytes { peer.send(opcode: 1, $0) }
                if !sent { closedByPeer() }
            }
            unsent.subtract(body.count, ordering: .relaxed)
            bound.progressed()
            let callback = written.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            callback?()
        }
        for callback in written.withLock({ callbacks in defer { callbacks = [] }; return callbacks }) { callback?() }
    }

    // MARK: From the server

    /// A frame came: the first of a message, or (`continuing`) a later one; `final` ends the
    /// message. Returns false to fail the connection: a message whose frames add up to more
    /// than the limit is refused before it is kept (RFC 6455's 1009), and frames out of order
    /// (a continuation with no message begun, a new message inside one) are a protocol error.
    func received(_ bytes: UnsafeRawBufferPointer, final: Bool, continuing: Bool) -> Bool {
        let message: Data?? = partial.withLock { partial in
            guard continuing == (partial != nil), (partial?.count ?? 0) + bytes.count <= maxMessageBytes else {
                partial = nil
                return .some(nil)
            }
            var gathered = partial ?? Data()
            gathered.append(contentsOf: bytes)
            guard final else {
                partial = gathered
                return nil
            }
            partial = nil
            return .some(gathered)
        }
        guard let message else { return true }
        guard let message else { return false }
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
        // Nobody reads it any more: nothing is kept for it.
        guard !isClosed.load(ordering: .sequentiallyConsistent) else { callback?(); return }
        let waiting = unsent.add(body.count, ordering: .relaxed).newValue
        written.withLock { $0.append(callback) }
        outbox.put(.message(body))
        if bound.isExceeded(unsent: waiting) {
            // A browser that reads none of its answers is let go (UnsentBound).
            bound.report()
            closedByPeer()
        }
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
