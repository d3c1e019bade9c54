import CofferCore
import CofferHTTPServer
public import CofferJSONRPC
import CofferRuntime
public import FileService
import Foundation
import Synchronization

extension MCPServer {
    /// Where and how `coffer mcp --listen http://HOST:PORT/PATH` serves.
    public struct HTTPOptions: Sendable {
        /// The address to listen on: a loopback one unless the user named another with `--address`.
        public var address: String
        public var port: Int
        /// The endpoint's path (`/mcp`).
        public var path: String
        /// Where the bearer token is kept (`AppData/mcp-token`, mode 0600).
        public var tokenPath: String
        public var newToken = false
        /// The most sessions (2025-11-25 clients) at once; each idle for an hour is ended.
        public var maxSessions = 64

        public init(address: String, port: Int, path: String, tokenPath: String) {
            self.address = address
            self.port = port
            self.path = path
            self.tokenPath = tokenPath
        }

        /// `http://HOST:PORT/PATH`, as `--listen` takes it.
        public init?(url text: String, tokenPath: String) {
            guard let url = URL(string: text), url.scheme == "http", let host = url.host, let port = url.port,
                  (0...65535).contains(port), url.query == nil else { return nil }
            let trimmed = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            self.init(address: trimmed == "localhost" ? "127.0.0.1" : trimmed, port: port,
                      path: url.path.isEmpty ? "/" : url.path, tokenPath: tokenPath)
        }

        public var isLoopback: Bool { ServedHost.isLoopback(address) }
    }

    /// Serves Streamable HTTP until SIGTERM or SIGINT; returns 0, or 1 when it cannot start.
    /// `announce` gets the endpoint's address, then (when it was just made) the token.
    public static func serveHTTP(_ service: FileService, configuration: Configuration, http: HTTPOptions,
                                 stops: StopSignals = StopSignals(),
                                 announce: @escaping @Sendable (_ address: String, _ newToken: String?) -> Void,
                                 fail: @escaping @Sendable (String) -> Void) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let store = AccessToken(path: http.tokenPath)
        let made = http.newToken || store.read() == nil
        let token: String
        do { token = try store.current(renew: http.newToken) } catch {
            fail(error.userMessage(in: configuration.language).text)
            return 1
        }
        let handler = MCPHTTPHandler(service: service, rpc: rpcConfiguration(configuration), http: http, token: token)
        let server: HTTPServer
        do {
            server = try HTTPServer(address: http.address, port: http.port, threads: http.maxSessions + 16, routes: handler)
        } catch {
            fail(error.reason)
            return 1
        }
        handler.port.store(server.port, ordering: .relaxed)
        service.retainBackgroundWork()
        announce("http://\(handler.authority)\(http.path)", made ? token : nil)
        let sweeper = Task { await handler.endIdleSessions() }
        await stops.wait()
        stops.disarm()
        sweeper.cancel()
        await handler.clients.stopAll()
        server.stop()
        await service.releaseBackgroundWork()
        return 0
    }
}

/// MCP's Streamable HTTP as routes of the HTTP server: who may ask, and the conversations under way — one per
/// `Mcp-Session-Id` (2025-11-25 clients, from their `initialize`), and one shared by the
/// stateless requests of 2026-07-28 clients, which carry everything in their own `_meta`.
final class MCPHTTPHandler: HTTPRoutes, @unchecked Sendable {
    let service: FileService
    let rpc: RPCServer.Configuration
    let http: MCPServer.HTTPOptions
    let token: String
    let port = Atomic<Int>(0)
    let clients = RPCClients()
    private let sessions = Mutex<[String: MCPHTTPConnection]>([:])
    private let stateless = Mutex<MCPHTTPConnection?>(nil)
    /// How long a session may stay unused before it is ended.
    static let idleLimit: TimeInterval = 60 * 60

    init(service: FileService, rpc: RPCServer.Configuration, http: MCPServer.HTTPOptions, token: String) {
        self.service = service
        self.rpc = rpc
        self.http = http
        self.token = token
    }

    /// The address served, and the names a request may give it (the web page's rule).
    var served: ServedHost { ServedHost(address: http.address, port: port.load(ordering: .relaxed)) }

    var authority: String { served.authority }

    // MARK: Requests

    func answer(_ exchange: HTTPExchange) -> Int {
        let method = exchange.method
        guard exchange.path == http.path else { return plain(exchange, 404, "Not found: the endpoint is \(http.path).") }
        // Who may ask (``HTTPGuard``): a browser page only of the endpoint's own origin (a page of
        // another site that got its name pointed here is refused, as the specification
        // requires), the endpoint's own name in `Host`, and the bearer token.
        let access = HTTPGuard(served: served)
        guard access.originAllowed(exchange) else {
            return plain(exchange, 403, "This Origin may not call this server.")
        }
        guard access.isServed(exchange) else {
            return plain(exchange, 421, "This server answers only to \(authority).")
        }
        guard HTTPGuard.matches(exchange.bearerToken, [token]) else {
            return plain(exchange, 401, "Send Authorization: Bearer TOKEN (the token `coffer mcp --listen` printed, kept in AppData/mcp-token).",
                         headers: "WWW-Authenticate: Bearer\r\n")
        }
        let sessionID = exchange.header("Mcp-Session-Id")
        switch method {
        case "POST": return post(exchange, sessionID: sessionID)
        case "DELETE":
            guard let sessionID else { return plain(exchange, 400, "DELETE names its session in Mcp-Session-Id.") }
            guard let ended = sessions.withLock({ $0.removeValue(forKey: sessionID) }) else {
                return plain(exchange, 404, "No such session.")
            }
            ended.close()
            return plain(exchange, 204, "")
        default:
            // No stream of the server's own requests is offered (`GET`): answers and progress
            // come on the POST of their request.
            return plain(exchange, 405, "POST a JSON-RPC message; DELETE ends a session.", headers: "Allow: POST, DELETE\r\n")
        }
    }

    private func post(_ exchange: HTTPExchange, sessionID: String?) -> Int {
        let body: Data
        switch exchange.readBody(limit: rpc.limits.maxMessageBytes) {
        case .success(let bytes): body = Data(bytes)
        case .failure(.tooLarge):
            return rpcError(exchange, 413, -32600, "The message is larger than \(rpc.limits.maxMessageBytes) bytes.")
        case .failure(.cutOff):
            return rpcError(exchange, 400, -32700, "Parse error: the body ended before its Content-Length.")
        }
        // Held to the same strict reading as every JSON-RPC message (one pass, nothing built):
        // what is needed to route it is found in place.
        guard String(validating: body, as: UTF8.self) != nil else {
            return rpcError(exchange, 400, -32700, "Parse error: the message is not valid UTF-8.")
        }
        let shape: StrictJSON.Shape
        do { shape = try StrictJSON.scan(body) } catch {
            return rpcError(exchange, 400, -32700, "Parse error: \(error.description).")
        }
        guard case .single(let object) = shape, object.isObject else {
            return rpcError(exchange, 400, -32600, "Invalid Request: one JSON-RPC 2.0 message per POST (no batches).")
        }
        guard let message = MCPRouting(reading: body, object) else {
            return rpcError(exchange, 400, -32600, "Invalid Request: a member is named twice.")
        }
        guard message.isVersion2 else {
            return rpcError(exchange, 400, -32600, "Invalid Request: one JSON-RPC 2.0 message per POST (no batches).")
        }
        let method = message.method
        // Which conversation it belongs to.
        let conversation: MCPHTTPConnection
        var newSession: String?
        if let sessionID {
            guard let found = sessions.withLock({ $0[sessionID] }) else {
                return rpcError(exchange, 404, -32001, "Session not found: it ended; send initialize again.")
            }
            conversation = found
        } else if method == "initialize" {
            guard sessions.withLock({ $0.count }) < http.maxSessions else {
                return rpcError(exchange, 503, -32000, "Too many sessions are open.")
            }
            guard let made = open() else { return rpcError(exchange, 500, -32603, "The session could not be opened.") }
            let id = UUID().uuidString.lowercased()
            sessions.withLock { $0[id] = made }
            conversation = made
            newSession = id
        } else if message.hasProtocolVersion || method == "server/discover" {
            guard let shared = sharedConversation() else { return rpcError(exchange, 500, -32603, "The server could not start.") }
            conversation = shared
        } else {
            return rpcError(exchange, 400, -32600, "Mcp-Session-Id is required: send initialize first (or, in 2026-07-28, "
                            + "io.modelcontextprotocol/protocolVersion in _meta).")
        }
        guard message.id != nil, method != nil else {
            conversation.notification(body, message)
            return plain(exchange, 202, "")
        }
        let call = conversation.request(body, message)
        defer { conversation.forget(call) }
        var headers = "Cache-Control: no-store\r\n"
        if let newSession { headers += "Mcp-Session-Id: \(newSession)\r\n" }
        let accept = exchange.header("Accept") ?? ""
        if call.clientToken != nil, accept.contains("text/event-stream") {
            // Progress as it comes, then the answer: a stream of server-sent events.
            exchange.beginEventStream(headers: headers)
            while let body = call.next(timeout: nil) {
                if !exchange.sendEvent(body) { break }
            }
            return 200
        }
        while let body = call.next(timeout: nil) {
            // Progress on the way is left out: only the answer is sent, as JSON.
            guard case .single(let answer)? = try? StrictJSON.scan(body), answer.method == nil else { continue }
            if let newSession, StrictJSON.members(of: body, at: answer.range)?["error"] != nil {
                sessions.withLock { $0.removeValue(forKey: newSession) }?.close()
                headers = "Cache-Control: no-store\r\n"
            }
            return exchange.answer(200, Array(body), type: "application/json", headers: headers)
        }
        // Cancelled (or the session ended): no answer is given.
        return plain(exchange, 204, "")
    }

    /// A new conversation, served as `coffer mcp` serves its standard input.
    private func open() -> MCPHTTPConnection? {
        let transport = MCPHTTPConnection()
        guard let client = try? RPCConnection(service: service, connection: transport, configuration: rpc) else { return nil }
        clients.serve(client)
        return transport
    }

    private func sharedConversation() -> MCPHTTPConnection? {
        stateless.withLock { shared in
            if shared == nil { shared = open() }
            return shared
        }
    }

    /// Ends the sessions left unused for an hour, every minute.
    func endIdleSessions() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(60))
            let cutoff = Date().addingTimeInterval(-Self.idleLimit)
            let idle = sessions.withLock { sessions in
                let idle = sessions.filter { $0.value.lastUse.withLock { $0 } < cutoff }
                for id in idle.keys { sessions[id] = nil }
                return Array(idle.values)
            }
            for session in idle { session.close() }
        }
    }

    // MARK: Bodies and answers

    @discardableResult
    private func plain(_ exchange: HTTPExchange, _ status: Int, _ text: String, headers: String = "") -> Int {
        exchange.answer(status, text: text, headers: headers)
    }

    /// A JSON-RPC error with no request id, as an HTTP answer of `status`.
    private func rpcError(_ exchange: HTTPExchange, _ status: Int, _ code: Int, _ message: String) -> Int {
        let answer: [String: Any] = ["jsonrpc": "2.0", "id": NSNull(), "error": ["code": code, "message": message]]
        let body = (try? JSONSerialization.data(withJSONObject: answer)) ?? Data()
        return exchange.answer(status, Array(body), type: "application/json")
    }
}
