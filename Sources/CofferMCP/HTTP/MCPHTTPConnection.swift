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
        /// The id's value, for a cancellation to name it however it writes it (`1` or `1.0`).
        let clientKey: String?
        private let outgoing = InProcessConnection.Channel()

        init(clientID: Data, clientKey: String?, clientToken: Data?) {
            self.clientID = clientID
            self.clientKey = clientKey
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
        /// The requests of the messages in the inbox, in its order (`nil` for a notification),
        /// and the one the server read last: an answer it could not give an id (`null`: the
        /// message could not be read) is that one's.
        var inboxOrder: [Exchange?] = []
        var lastRead: Exchange?
    }
    private let routes = Mutex(Routes())
    private let isClosed = Atomic<Bool>(false)
    private let hangUp = Mutex<(@Sendable () -> Void)?>(nil)
    /// When a client last used it (a session left alone long enough is ended).
    let lastUse = Mutex(Date())

    // MARK: From the client

    /// Takes in a request the client POSTed (its `body`, read as `message`): gives it an id of
    /// this connection's own (and its progress token one too), and returns where its answer
    /// will come.
    func request(_ body: Data, _ message: MCPRouting) -> Exchange {
        guard let idRange = message.id else { preconditionFailure("a request has an id") }
        let tokenRange = message.progressToken
        let exchange = Exchange(clientID: Self.text(of: body, idRange), clientKey: MCPRouting.key(of: body, idRange),
                                clientToken: tokenRange.map { Self.text(of: body, $0) })
        let (id, token) = routes.withLock { routes -> (String, String) in
            routes.next += 1
            let id = "h\(routes.next)", token = "p\(routes.next)"
            routes.byID[id] = exchange
            if tokenRange != nil { routes.byToken[token] = exchange }
            return (id, token)
        }
        var edits = [(range: idRange, with: Data("\"\(id)\"".utf8))]
        if let tokenRange { edits.append((tokenRange, Data("\"\(token)\"".utf8))) }
        take(StrictJSON.replacing(edits, in: body), for: exchange)
        return exchange
    }

    /// Takes in a notification (or a client's answer): a cancellation names the request by
    /// this connection's id, and ends the POST waiting for it.
    func notification(_ body: Data, _ message: MCPRouting) {
        guard message.method == "notifications/cancelled", let requestID = message.requestID,
              let key = MCPRouting.key(of: body, requestID) else {
            return take(body, for: nil)
        }
        let found = routes.withLock { routes in
            routes.byID.first { $0.value.clientKey == key }.map { ($0.key, $0.value) }
        }
        guard let (id, exchange) = found else { return take(body, for: nil) }
        take(StrictJSON.replacing([(requestID, Data("\"\(id)\"".utf8))], in: body), for: nil)
        exchange.end()
    }

    private func take(_ body: Data, for exchange: Exchange?) {
        lastUse.withLock { $0 = Date() }
        // In the same order as the inbox's, so the server's reading can be followed.
        routes.withLock { routes in
            routes.inboxOrder.append(exchange)
            inbox.put(.message(body))
        }
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
        if case .message(let body) = inbox.take(timeout: nil) {
            routes.withLock { routes in
                routes.lastRead = routes.inboxOrder.isEmpty ? nil : routes.inboxOrder.removeFirst()
            }
            return .message(body)
        }
        return .end(isClosed.load(ordering: .sequentiallyConsistent) ? .hungUp : .finished)
    }

    /// Routes what the server sends: an answer to the POST of its request, with the client's id
    /// back in it; progress to the POST whose request asked for it. What has no POST to go to
    /// (a request of the server's own, such as `roots/list`) is dropped: Streamable HTTP's
    /// optional stream for them (`GET`) is not offered.
    func send(_ body: Data, whenWritten: (@Sendable () -> Void)?) {
        defer { whenWritten?() }
        guard !isClosed.load(ordering: .sequentiallyConsistent),
              case .single(let outgoing)? = try? StrictJSON.scan(body),
              let message = MCPRouting(reading: body, outgoing) else { return }
        if message.method == nil, let idRange = message.id {
            // An answer: to the POST of its request, with the client's id back in it. One the
            // server could not give an id (`null`) answers the message it read last.
            let exchange = routes.withLock { routes -> Exchange? in
                if let id = StrictJSON.string(in: body, at: idRange) { return routes.byID[id] }
                guard let last = routes.lastRead, routes.byID.values.contains(where: { $0 === last }) else { return nil }
                return last
            }
            guard let exchange else { return }
            forget(exchange)
            exchange.deliver(StrictJSON.replacing([(idRange, exchange.clientID)], in: body))
            exchange.end()
        } else if message.method == "notifications/progress", let tokenRange = message.progressOf,
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

/// What routing a JSON-RPC message over HTTP needs of it, found in place in its bytes by
/// ``StrictJSON``: its `id` and `method`, `params._meta`'s `progressToken` and protocol
/// version (the stateless era's mark), a progress notification's token and a cancellation's
/// `params.requestId`.
struct MCPRouting {
    var id: Range<Int>?
    var method: String?
    /// A request's `params._meta.progressToken`.
    var progressToken: Range<Int>?
    /// A progress notification's `params.progressToken`.
    var progressOf: Range<Int>?
    /// A cancellation's `params.requestId`.
    var requestID: Range<Int>?
    var hasProtocolVersion = false
    var isVersion2 = false

    /// `nil` when a member it reads is named twice: which one a reader would take is not agreed
    /// on, and the wrong one would send an answer to another client.
    init?(reading body: Data, _ message: StrictJSON.Message) {
        guard let top = StrictJSON.members(of: body, at: message.range) else { return nil }
        id = top["id"]
        method = top["method"].flatMap { StrictJSON.string(in: body, at: $0) }
        isVersion2 = top["jsonrpc"].flatMap { StrictJSON.string(in: body, at: $0) } == "2.0"
        guard let paramsRange = top["params"] else { return }
        guard let params = StrictJSON.members(of: body, at: paramsRange) else { return nil }
        requestID = params["requestId"]
        progressOf = params["progressToken"]
        guard let metaRange = params["_meta"] else { return }
        guard let meta = StrictJSON.members(of: body, at: metaRange) else { return nil }
        progressToken = meta["progressToken"]
        hasProtocolVersion = meta["io.modelcontextprotocol/protocolVersion"] != nil
    }

    /// An id's value, however it is written: a string's text, a number's value.
    static func key(of body: Data, _ range: Range<Int>) -> String? {
        if let text = StrictJSON.string(in: body, at: range) { return "s" + text }
        let written = String(decoding: body[(body.startIndex + range.lowerBound)..<(body.startIndex + range.upperBound)], as: UTF8.self)
        return Double(written).map { "n\($0)" }
    }
}
