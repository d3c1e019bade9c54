import CCivetWeb
import CofferCore
import CofferJSONRPC
import CofferRuntime
import FileService
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

        public var isLoopback: Bool { address == "127.0.0.1" || address == "::1" || address.hasPrefix("127.") }
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
        let handlers = coffer_web_handlers(
            request: { context, connection, request in
                LargeStack.run { MCPHTTPHandler.from(context).request(connection!, request!.pointee) }
            },
            ws_connect: { _, _, _ in 1 },
            ws_ready: { _, _ in }, ws_data: { _, _, _, _, _ in 0 }, ws_closed: { _, _ in })
        let listen = http.address.contains(":") ? "[\(http.address)]:\(http.port)" : "\(http.address):\(http.port)"
        let context = Unmanaged.passRetained(handler).toOpaque()
        var port: Int32 = 0
        var error = [CChar](repeating: 0, count: 256)
        guard let server = coffer_web_start(listen, Int32(http.maxSessions + 16), handlers, context, &port, &error, error.count) else {
            Unmanaged<MCPHTTPHandler>.fromOpaque(context).release()
            fail(String(cBuffer: error))
            return 1
        }
        handler.port.store(Int(port), ordering: .relaxed)
        service.retainBackgroundWork()
        announce("http://\(handler.authority)\(http.path)", made ? token : nil)
        let sweeper = Task { await handler.endIdleSessions() }
        await stops.wait()
        stops.disarm()
        sweeper.cancel()
        await handler.clients.stopAll()
        coffer_web_stop(server)
        await service.releaseBackgroundWork()
        Unmanaged<MCPHTTPHandler>.fromOpaque(context).release()
        return 0
    }
}

/// What CivetWeb's callbacks reach: who may ask, and the conversations under way — one per
/// `Mcp-Session-Id` (2025-11-25 clients, from their `initialize`), and one shared by the
/// stateless requests of 2026-07-28 clients, which carry everything in their own `_meta`.
final class MCPHTTPHandler: @unchecked Sendable {
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

    static func from(_ context: UnsafeMutableRawPointer?) -> MCPHTTPHandler {
        Unmanaged<MCPHTTPHandler>.fromOpaque(context!).takeUnretainedValue()
    }

    /// The address served, and the names a request may give it (the web page's rule).
    var served: ServedHost { ServedHost(address: http.address, port: port.load(ordering: .relaxed)) }

    var authority: String { served.authority }

    // MARK: Who may ask

    /// The origins a browser page may call from: the endpoint's own. A page of another site
    /// that got its name pointed here (DNS rebinding) is refused, as the specification requires.
    /// No `Origin` (a client that is not a browser) is fine; `null` is not.
    private func originAllowed(_ origin: String?) -> Bool {
        guard let origin else { return true }
        return served.isOrigin(origin)
    }

    // MARK: Requests

    func request(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request) -> Int32 {
        let method = String(cString: request.method)
        guard String(cString: request.path) == http.path else { return plain(connection, 404, "Not found: the endpoint is \(http.path).") }
        guard originAllowed(request.origin.map { String(cString: $0) }) else {
            return plain(connection, 403, "This Origin may not call this server.")
        }
        guard served.isNamed(by: request.host.map { String(cString: $0) }) else {
            return plain(connection, 421, "This server answers only to \(authority).")
        }
        let authorization = request.authorization.map { String(cString: $0) } ?? ""
        guard authorization.hasPrefix("Bearer "), AccessToken.same(String(authorization.dropFirst(7)), token) else {
            return plain(connection, 401, "Send Authorization: Bearer TOKEN (the token `coffer mcp --listen` printed, kept in AppData/mcp-token).",
                         headers: "WWW-Authenticate: Bearer\r\n")
        }
        let sessionID = header(connection, "Mcp-Session-Id")
        switch method {
        case "POST": return post(connection, request, sessionID: sessionID)
        case "DELETE":
            guard let sessionID else { return plain(connection, 400, "DELETE names its session in Mcp-Session-Id.") }
            guard let ended = sessions.withLock({ $0.removeValue(forKey: sessionID) }) else {
                return plain(connection, 404, "No such session.")
            }
            ended.close()
            return plain(connection, 204, "")
        default:
            // No stream of the server's own requests is offered (`GET`): answers and progress
            // come on the POST of their request.
            return plain(connection, 405, "POST a JSON-RPC message; DELETE ends a session.", headers: "Allow: POST, DELETE\r\n")
        }
    }

    private func post(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request, sessionID: String?) -> Int32 {
        guard let body = readBody(connection, request) else {
            return rpcError(connection, 413, -32600, "The message is larger than \(rpc.limits.maxMessageBytes) bytes.")
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else {
            return rpcError(connection, 400, -32700, "Parse error: the body is not JSON.")
        }
        guard let message = parsed as? [String: Any], message["jsonrpc"] as? String == "2.0" else {
            return rpcError(connection, 400, -32600, "Invalid Request: one JSON-RPC 2.0 message per POST (no batches).")
        }
        let method = message["method"] as? String
        let meta = (message["params"] as? [String: Any])?["_meta"] as? [String: Any]
        // Which conversation it belongs to.
        let conversation: MCPHTTPConnection
        var newSession: String?
        if let sessionID {
            guard let found = sessions.withLock({ $0[sessionID] }) else {
                return rpcError(connection, 404, -32001, "Session not found: it ended; send initialize again.")
            }
            conversation = found
        } else if method == "initialize" {
            guard sessions.withLock({ $0.count }) < http.maxSessions else {
                return rpcError(connection, 503, -32000, "Too many sessions are open.")
            }
            guard let made = open() else { return rpcError(connection, 500, -32603, "The session could not be opened.") }
            let id = UUID().uuidString.lowercased()
            sessions.withLock { $0[id] = made }
            conversation = made
            newSession = id
        } else if meta?["io.modelcontextprotocol/protocolVersion"] != nil || method == "server/discover" {
            guard let shared = sharedConversation() else { return rpcError(connection, 500, -32603, "The server could not start.") }
            conversation = shared
        } else {
            return rpcError(connection, 400, -32600, "Mcp-Session-Id is required: send initialize first (or, in 2026-07-28, "
                            + "io.modelcontextprotocol/protocolVersion in _meta).")
        }
        guard message["id"] != nil, method != nil else {
            conversation.notification(message)
            return plain(connection, 202, "")
        }
        let exchange = conversation.request(message)
        defer { conversation.forget(exchange) }
        var headers = "Cache-Control: no-store\r\n"
        if let newSession { headers += "Mcp-Session-Id: \(newSession)\r\n" }
        let accept = header(connection, "Accept") ?? ""
        if exchange.clientToken != nil, accept.contains("text/event-stream") {
            // Progress as it comes, then the answer: a stream of server-sent events.
            _ = coffer_web_respond(connection, 200, headers + "Content-Type: text/event-stream\r\nConnection: close\r\n", -1)
            while let body = exchange.next(timeout: nil) {
                var event = Data("event: message\ndata: ".utf8)
                event.append(body)
                event.append(contentsOf: Array("\n\n".utf8))
                if event.withUnsafeBytes({ coffer_web_write(connection, $0.baseAddress, $0.count) }) < 0 { break }
            }
            return 200
        }
        while let body = exchange.next(timeout: nil) {
            guard let answer = try? JSONSerialization.jsonObject(with: body) as? [String: Any], answer["method"] == nil else { continue }
            if newSession != nil, answer["error"] != nil, let newSession {
                sessions.withLock { $0.removeValue(forKey: newSession) }?.close()
                headers = "Cache-Control: no-store\r\n"
            }
            _ = coffer_web_respond(connection, 200, headers + "Content-Type: application/json\r\n", Int64(body.count))
            _ = body.withUnsafeBytes { coffer_web_write(connection, $0.baseAddress, $0.count) }
            return 200
        }
        // Cancelled (or the session ended): no answer is given.
        return plain(connection, 204, "")
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

    private func readBody(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request) -> Data? {
        let limit = rpc.limits.maxMessageBytes
        if request.content_length > Int64(limit) { return nil }
        var body = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { coffer_web_read(connection, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            body.append(contentsOf: buffer[..<Int(count)])
            if body.count > limit { return nil }
        }
        return body
    }

    private func header(_ connection: UnsafeMutableRawPointer, _ name: String) -> String? {
        coffer_web_header(connection, name).map { String(cString: $0).trimmingCharacters(in: .whitespaces) }
    }

    @discardableResult
    private func plain(_ connection: UnsafeMutableRawPointer, _ status: Int32, _ text: String, headers: String = "") -> Int32 {
        let body = Array(text.utf8)
        let type = body.isEmpty ? "" : "Content-Type: text/plain; charset=utf-8\r\n"
        _ = coffer_web_respond(connection, status, headers + type, status == 204 ? -1 : Int64(body.count))
        if !body.isEmpty { _ = body.withUnsafeBytes { coffer_web_write(connection, $0.baseAddress, $0.count) } }
        return status
    }

    /// A JSON-RPC error with no request id, as an HTTP answer of `status`.
    private func rpcError(_ connection: UnsafeMutableRawPointer, _ status: Int32, _ code: Int, _ message: String) -> Int32 {
        let answer: [String: Any] = ["jsonrpc": "2.0", "id": NSNull(), "error": ["code": code, "message": message]]
        let body = (try? JSONSerialization.data(withJSONObject: answer)) ?? Data()
        _ = coffer_web_respond(connection, status, "Content-Type: application/json\r\n", Int64(body.count))
        _ = body.withUnsafeBytes { coffer_web_write(connection, $0.baseAddress, $0.count) }
        return status
    }
}
