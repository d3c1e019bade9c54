public import Foundation
import Synchronization

/// Two ends of a connection inside one process, for tests and for applications that drive
/// the JSON-RPC server in-process: messages put in at one end come out of the other whole,
/// with the size limit a real transport enforces.
public enum InProcessConnection {
    /// A connected pair: hand `server` to the server, talk through `client`.
    public static func pair(maxMessageBytes: Int = RPCLimits().maxMessageBytes) -> (server: ServerEnd, client: ClientEnd) {
        let toServer = Channel()
        let toClient = Channel()
        let hangUp = HangUp()
        return (ServerEnd(inbox: toServer, outbox: toClient, hangUp: hangUp, maxMessageBytes: maxMessageBytes),
                ClientEnd(inbox: toClient, outbox: toServer, hangUp: hangUp))
    }

    /// The server's end.
    public final class ServerEnd: MessageConnection {
        private let inbox: Channel
        private let outbox: Channel
        private let hangUp: HangUp
        private let maxMessageBytes: Int

        init(inbox: Channel, outbox: Channel, hangUp: HangUp, maxMessageBytes: Int) {
            self.inbox = inbox
            self.outbox = outbox
            self.hangUp = hangUp
            self.maxMessageBytes = maxMessageBytes
        }

        public func receive() -> IncomingFrame {
            switch inbox.take(timeout: nil) {
            case .message(let body): body.count > maxMessageBytes ? .tooLarge(body.count) : .message(body)
            case .finished: .end(.finished)
            case .closed, nil: .end(.hungUp)
            }
        }

        public func send(_ body: Data, whenWritten: (@Sendable () -> Void)?) {
            if !hangUp.happened { outbox.put(.message(body)) }
            whenWritten?()
        }

        public func flush(then: @escaping @Sendable () -> Void) { then() }

        public func stopReceiving() { inbox.put(.closed) }

        public func close() {
            inbox.put(.closed)
            outbox.put(.closed)
        }

        public func onHangUp(_ handler: @escaping @Sendable () -> Void) { hangUp.observe(handler) }
    }

    /// The client's end.
    public final class ClientEnd: Sendable {
        private let inbox: Channel
        private let outbox: Channel
        private let departure: HangUp

        init(inbox: Channel, outbox: Channel, hangUp: HangUp) {
            self.inbox = inbox
            self.outbox = outbox
            self.departure = hangUp
        }

        /// Sends one message body.
        public func send(_ body: Data) { outbox.put(.message(body)) }

        /// The next message from the server, or `nil` when none came within `timeout` or
        /// the server closed its end.
        public func receive(timeout: Duration = .seconds(10)) -> Data? {
            guard case .message(let body) = inbox.take(timeout: timeout) else { return nil }
            return body
        }

        /// Ends the input, as closing a pipe does: what was sent is still answered.
        public func finishSending() { outbox.put(.finished) }

        /// Goes away: the server sees the peer gone and cancels what it started.
        public func hangUp() {
            outbox.put(.closed)
            departure.signal()
        }
    }

    public enum Item: Sendable {
        case message(Data)
        case finished
        case closed
    }

    /// A queue one side puts into and the other waits on (also the inbox of transports
    /// whose messages arrive on threads of their own, as a WebSocket's do).
    public final class Channel: Sendable {
        private let condition = NSCondition()
        private nonisolated(unsafe) var items: [Item] = []  // guarded by `condition`
        private nonisolated(unsafe) var ended = false

        public init() {}

        public func put(_ item: Item) {
            condition.lock()
            if !ended { items.append(item) }
            if case .message = item {} else { ended = true }
            condition.broadcast()
            condition.unlock()
        }

        public func take(timeout: Duration?) -> Item? {
            let deadline = timeout.map { Date().addingTimeInterval(Double($0.components.seconds)
                                                                  + Double($0.components.attoseconds) / 1e18) }
            condition.lock()
            defer { condition.unlock() }
            while items.isEmpty {
                if let deadline {
                    guard condition.wait(until: deadline) else { return nil }
                } else {
                    condition.wait()
                }
            }
            let item = items.removeFirst()
            // The end stays, for whoever asks again.
            if case .message = item {} else { items.insert(item, at: 0) }
            return item
        }
    }

    /// The client going away, observed once by the server.
    final class HangUp: Sendable {
        private let state = Mutex<(done: Bool, handler: (@Sendable () -> Void)?)>((false, nil))

        var happened: Bool { state.withLock { $0.done } }

        func observe(_ handler: @escaping @Sendable () -> Void) {
            let already = state.withLock { state -> Bool in
                if !state.done { state.handler = handler }
                return state.done
            }
            if already { handler() }
        }

        func signal() {
            let handler = state.withLock { state -> (@Sendable () -> Void)? in
                guard !state.done else { return nil }
                state.done = true
                defer { state.handler = nil }
                return state.handler
            }
            handler?()
        }
    }
}
