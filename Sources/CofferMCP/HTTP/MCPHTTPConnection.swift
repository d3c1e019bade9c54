import CofferJSONRPC
import Foundation
import Synchronization

/// One MCP conversation over Streamable HTTP, as the JSON-RPC server's transport: messages a
/// client POSTs are read from an inbox; what the server sends is routed back to the POST
/// waiting for it — a request's answer, and the progress of that request on the way.
///
/// Request ids and progress tokens are the client's, and the stateless era's clients share
/// one conversation: each POSTed request therefore gets an id and a progress token of this
/// connection's own, given back to the client in what it is answered.
final class MCPHTTPConnection: MessageConnection, @unchecked Sendable {
    /// One POSTed request waiting for its answer: what goes out to it, in order, the answer
    /// last; `nil` ends it without one (the request was cancelled).
    final class Exchange: @unchecked Sendable {
        let clientID: Any
        let clientToken: Any?
        private let outgoing = InProcessConnection.Channel()

        init(clientID: Any, clientToken: Any?) {
            self.clientID = clientID
            self.clientToken = clientToken
        }

        func deliver(_ body: Data) { outgoing.put(.message(body)) }
        func end() { outgoing.put(.finished) }

        /// The next message for this request: a progress notification or its answer (`isAnswer`),
        /// or `nil` when it ended without one or `timeout` passed.
        func next(timeout: Duration?) -> Data? {
            if case .message(let body) = outgoing.take(timeout: timeout) { return body }
            return nil
        }
    }

    private let inbox = InProcessConnection.Channel()
    private struct Routes {
        var byID: [String: Exchange] = [:]
        var byToken: [String: Exchange] = [:]
        var next = 0
    }
    private let routes = Mutex(Routes())
    private let isClosed = Atomic<Bool>(false)
    private let hangUp = Mutex<(@Sendable () -> Void)?>(nil)
    /// When a client last used it (a session left alone long enough is ended).
    let lastUse = Mutex(Date())

    // MARK: From the client

    /// Takes in a request the client POSTed (a JSON object with `id` and `method`): gives it an
    /// id of this connection's own (and its progress token one too), and returns where its
    /// answer will come.
    func request(_ message: [String: Any]) -> Exchange {
        var message = message
        var meta = (message["params"] as? [String: Any])?["_meta"] as? [String: Any]
        let clientToken = meta?["progressToken"]
        let exchange = Exchange(clientID: message["id"] ?? NSNull(), clientToken: clientToken)
        let (id, token) = routes.withLock { routes -> (String, String) in
            routes.next += 1
            let id = "h\(routes.next)", token = "p\(routes.next)"
            routes.byID[id] = exchange
            if clientToken != nil { routes.byToken[token] = exchange }
            return (id, token)
        }
        message["id"] = id
        if clientToken != nil, var params = message["params"] as? [String: Any] {
            meta?["progressToken"] = token
            params["_meta"] = meta
            message["params"] = params
        }
        take(message)
        return exchange
    }

    /// Takes in a notification (or a client's answer): a cancellation names the request by
    /// this connection's id, and ends the POST waiting for it.
    func notification(_ message: [String: Any]) {
        var message = message
        if message["method"] as? String == "notifications/cancelled", var params = message["params"] as? [String: Any],
           let clientID = params["requestId"] {
            let found = routes.withLock { routes in
                routes.byID.first { Self.same($0.value.clientID, clientID) }.map { ($0.key, $0.value) }
            }
            if let (id, exchange) = found {
                params["requestId"] = id
                message["params"] = params
                exchange.end()
            }
        }
        take(message)
    }

    private func take(_ message: [String: Any]) {
        lastUse.withLock { $0 = Date() }
        guard let body = try? JSONSerialization.data(withJSONObject: message, options: [.withoutEscapingSlashes]) else { return }
        inbox.put(.message(body))
    }

    /// The request the exchange was for is done with (answered, cancelled, or its client gone).
    func forget(_ exchange: Exchange) {
        routes.withLock { routes in
            routes.byID = routes.byID.filter { $0.value !== exchange }
            routes.byToken = routes.byToken.filter { $0.value !== exchange }
        }
    }

    private static func same(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case (let x as String, let y as String): x == y
        case (let x as NSNumber, let y as NSNumber): x == y
        default: false
        }
    }

    // MARK: MessageConnection

    func receive() -> IncomingFrame {
        if case .message(let body) = inbox.take(timeout: nil) { return .message(body) }
        return .end(isClosed.load(ordering: .sequentiallyConsistent) ? .hungUp : .finished)
    }

    /// Routes what the server sends: an answer to the POST of its request, with the client's id
    /// back in it; progress to the POST whose request asked for it. What has no POST to go to
    /// (a request of the server's own, such as `roots/list`) is dropped: Streamable HTTP's
    /// optional stream for them (`GET`) is not offered.
    func send(_ body: Data, whenWritten: (@Sendable () -> Void)?) {
        defer { whenWritten?() }
        guard !isClosed.load(ordering: .sequentiallyConsistent),
              var message = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else { return }
        if message["method"] == nil, let id = message["id"] as? String {
            guard let exchange = routes.withLock({ $0.byID[id] }) else { return }
            message["id"] = exchange.clientID
            forget(exchange)
            exchange.deliver(Self.encode(message))
            exchange.end()
        } else if message["method"] as? String == "notifications/progress", var params = message["params"] as? [String: Any],
                  let token = params["progressToken"] as? String, let exchange = routes.withLock({ $0.byToken[token] }) {
            params["progressToken"] = exchange.clientToken
            message["params"] = params
            exchange.deliver(Self.encode(message))
        }
    }

    private static func encode(_ message: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: message, options: [.withoutEscapingSlashes])) ?? Data()
    }

    func flush(then: @escaping @Sendable () -> Void) { then() }

    func stopReceiving() { inbox.put(.finished) }

    func close() {
        guard !isClosed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        inbox.put(.closed)
        let waiting = routes.withLock { routes in
            defer { routes = Routes() }
            return Array(routes.byID.values)
        }
        for exchange in waiting { exchange.end() }
        hangUp.withLock { $0 }?()
    }

    func onHangUp(_ handler: @escaping @Sendable () -> Void) { hangUp.withLock { $0 = handler } }
}
