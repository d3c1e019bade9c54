import CofferJSONRPC
import Foundation
import Synchronization

/// One MCP conversation over Streamable HTTP, as the JSON-RPC server's transport: messages a
/// client POSTs are read from an inbox; what the server sends is routed back to the POST
/// waiting for it — a request's answer, and the progress of that request on the way.
///
/// Request ids and progress tokens are the client's, and the stateless era's clients share
/// one conversation: each POSTed request therefore gets an id and a progress token of this
/// connection's own, given back to the client in what it is answered. Both are swapped in the
/// message's bytes, where ``StrictJSON`` found them: the client gets its id back exactly as it
/// wrote it (`1.0` stays `1.0`), and no message is parsed into objects and written again.
final class MCPHTTPConnection: MessageConnection, @unchecked Sendable {
    /// One POSTed request waiting for its answer: what goes out to it, in order, the answer
    /// last; `nil` ends it without one (the request was cancelled).
    final class Exchange: @unchecked Sendable {
        /// The client's id and progress token, as the JSON text it sent.
        let clientID: Data
        let clientToken: Data?
        private let outgoing = InProcessConnection.Channel()

        init(clientID: Data, clientToken: Data?) {
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

    /// Takes in a request the client POSTed (`message`, an object of `body` with `id` and
    /// `method`, as ``StrictJSON`` found it): gives it an id of this connection's own (and its
    /// progress token one too), and returns where its answer will come.
    func request(_ body: Data, _ message: StrictJSON.Message) -> Exchange {
        guard let idRange = message.id else { preconditionFailure("a request has an id") }
        let tokenRange = message.params.flatMap { params in
            StrictJSON.members(of: body, at: params)["_meta"].flatMap { StrictJSON.members(of: body, at: $0)["progressToken"] }
        }
        let exchange = Exchange(clientID: Self.text(of: body, idRange), clientToken: tokenRange.map { Self.text(of: body, $0) })
        let (id, token) = routes.withLock { routes -> (String, String) in
            routes.next += 1
            let id = "h\(routes.next)", token = "p\(routes.next)"
            routes.byID[id] = exchange
            if tokenRange != nil { routes.byToken[token] = exchange }
            return (id, token)
        }
        var edits = [(range: idRange, with: Data("\"\(id)\"".utf8))]
        if let tokenRange { edits.append((tokenRange, Data("\"\(token)\"".utf8))) }
        take(StrictJSON.replacing(edits, in: body))
        return exchange
    }

    /// Takes in a notification (or a client's answer): a cancellation names the request by
    /// this connection's id, and ends the POST waiting for it.
    func notification(_ body: Data, _ message: StrictJSON.Message) {
        guard let method = message.method, StrictJSON.string(in: body, at: method) == "notifications/cancelled",
              let params = message.params, let requestID = StrictJSON.members(of: body, at: params)["requestId"] else {
            return take(body)
        }
        let clientID = Self.text(of: body, requestID)
        let found = routes.withLock { routes in
            routes.byID.first { $0.value.clientID == clientID }.map { ($0.key, $0.value) }
        }
        guard let (id, exchange) = found else { return take(body) }
        take(StrictJSON.replacing([(requestID, Data("\"\(id)\"".utf8))], in: body))
        exchange.end()
    }

    private func take(_ body: Data) {
        lastUse.withLock { $0 = Date() }
        inbox.put(.message(body))
    }

    /// The request the exchange was for is done with (answered, cancelled, or its client gone).
    func forget(_ exchange: Exchange) {
        routes.withLock { routes in
            routes.byID = routes.byID.filter { $0.value !== exchange }
            routes.byToken = routes.byToken.filter { $0.value !== exchange }
        }
    }

    private static func text(of body: Data, _ range: Range<Int>) -> Data {
        Data(body[(body.startIndex + range.lowerBound)..<(body.startIndex + range.upperBound)])
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
              case .single(let message)? = try? StrictJSON.scan(body) else { return }
        if message.method == nil, let idRange = message.id {
            guard let id = StrictJSON.string(in: body, at: idRange),
                  let exchange = routes.withLock({ $0.byID[id] }) else { return }
            forget(exchange)
            exchange.deliver(StrictJSON.replacing([(idRange, exchange.clientID)], in: body))
            exchange.end()
        } else if let method = message.method, StrictJSON.string(in: body, at: method) == "notifications/progress",
                  let params = message.params, let tokenRange = StrictJSON.members(of: body, at: params)["progressToken"],
                  let token = StrictJSON.string(in: body, at: tokenRange),
                  let exchange = routes.withLock({ $0.byToken[token] }), let clientToken = exchange.clientToken {
            exchange.deliver(StrictJSON.replacing([(tokenRange, clientToken)], in: body))
        }
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
