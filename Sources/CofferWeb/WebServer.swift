import CofferCore
import CofferHTTPServer
import CofferPreview
import CofferJSONRPC
import CofferRuntime
import FileService
import Foundation
import Synchronization

/// `coffer serve`: the file browser in a browser. CivetWeb serves the page (HTML, CSS and
/// JavaScript kept in the package), files to download, thumbnails, and JSON-RPC over a
/// WebSocket at `/rpc`, answered by the same connection code as `coffer rpc`, one session per
/// socket.
///
/// As any local web server must: it listens on 127.0.0.1 unless told otherwise; every request
/// shows the access token (a cookie after the first load); the `Host` header must name the
/// address served and a WebSocket's `Origin` the page's own; the page runs under a strict
/// Content-Security-Policy; users' files are sent sandboxed, as attachments unless they are
/// images or PDFs; and URLs name files only as virtual paths, read through the service.
public enum WebServer {
    public struct Configuration: Sendable {
        /// The address to listen on: 127.0.0.1 unless a user chose another (with a warning).
        public var address = "127.0.0.1"
        /// The port; 0 lets the system choose one.
        public var port = 8790
        public var language: Language
        public var version: String
        /// Replace the token, ending every session of the old one.
        public var newToken = false
        /// Whether to open the page in the user's browser (`--open`): through a file only its
        /// owner can read, holding a one-time address (``RedirectFile``).
        public var opensBrowser = false
        /// Where that file goes when there is no `$XDG_RUNTIME_DIR`.
        public var redirectFolder: String?
        /// The most WebSockets open at once (each holds one of CivetWeb's threads).
        public var maxConnections = 96
        public var limits = RPCLimits()
        /// Serve share links only (`--share-only`): no page, no WebSocket, no token asked.
        public var shareOnly = false
        /// Take the client's address from `X-Forwarded-For` (`--trust-forwarded`), for a server
        /// behind a reverse proxy the user set up; otherwise the header is ignored.
        public var trustsForwardedFor = false

        public init(language: Language, version: String) {
            self.language = language
            self.version = version
        }
    }

    /// Serves until SIGTERM or SIGINT, then ends every session (nothing half-done is left)
    /// and returns 0; returns 1 when it cannot start. `announce` gets the URL to open (with the
    /// token, for its owner to read); with ``Configuration/opensBrowser``, `open` gets the path
    /// of the file to hand the browser.
    public static func serve(_ service: FileService, tokenPath: String, configuration: Configuration,
                             stops: StopSignals = StopSignals(),
                             announce: @escaping @Sendable (String) -> Void,
                             open: @escaping @Sendable (String) -> Void = { _ in },
                             fail: @escaping @Sendable (String) -> Void) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let store = AccessToken(path: tokenPath)
        let token: String
        do { token = try store.current(renew: configuration.newToken) } catch {
            fail(error.userMessage(in: configuration.language).text)
            return 1
        }
        let handler: WebHandler
        do { handler = try WebHandler(service: service, configuration: configuration, token: token, store: store) } catch {
            fail(error.userMessage(in: configuration.language).text)
            return 1
        }
        let server: HTTPServer
        do {
            server = try HTTPServer(address: configuration.address, port: configuration.port,
                                    threads: configuration.maxConnections + 32, routes: handler)
        } catch {
            fail(error.reason)
            return 1
        }
        let port = server.port
        do { try handler.listening(on: port) } catch {
            server.stop()
            fail(error.userMessage(in: configuration.language).text)
            return 1
        }
        service.retainBackgroundWork()
        // Serving share links only, there is no page to open: the address has no token.
        announce(configuration.shareOnly ? "http://\(handler.authority)" : handler.address)
        var redirect: String?
        if configuration.opensBrowser && !configuration.shareOnly {
            let folder = RedirectFile.folder(fallback: configuration.redirectFolder ?? NSTemporaryDirectory())
            do {
                redirect = try RedirectFile.make(address: handler.oneTimeAddress(), port: port, in: folder)
                open(redirect!)
            } catch {
                fail(error.userMessage(in: configuration.language).text)
            }
        }
        defer { if let redirect { unlink(redirect) } }
        let watcher = Task { await handler.watchToken() }
        await stops.wait()
        stops.disarm()
        watcher.cancel()
        await handler.stopAll()
        // Downloads and thumbnails under way stop now, so CivetWeb's workers are free to end.
        handler.session.stopWork()
        for visitor in handler.visitors.withLock({ Array($0.values) }) { visitor.stopWork() }
        server.stop()
        await handler.session.close()
        await service.releaseBackgroundWork()
        return 0
    }
}

/// The web front end's routes on the HTTP server: the policy for every request, and the open
/// WebSockets.
final class WebHandler: HTTPRoutes, @unchecked Sendable {
    let service: FileService
    let configuration: WebServer.Configuration
    /// The session HTTP requests (downloads, thumbnails) are read in.
    let session: Session
    private let store: AccessToken
    private let token: Mutex<String>
    /// What the browser's cookie holds, derived from the token and the port (``BrowserKey``).
    private let browserKey = Mutex<BrowserKey?>(nil)
    private let oneTimeCodes = OneTimeCodes()
    private let port = Atomic<Int>(0)
    /// The open WebSockets, by their peer.
    let sockets = Mutex<[WebSocketPeer: WebSocketConnection]>([:])
    let clients = RPCClients()
    /// Signs the cookies of share links unlocked with their password; new every start.
    let shareKey: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }()
    /// The sessions of share-link visitors answered now (one per request), by number: a
    /// server that stops stops their work too.
    let visitors = Mutex<[Int: Session]>([:])

    init(service: FileService, configuration: WebServer.Configuration, token: String, store: AccessToken) throws(CofferError) {
        self.service = service
        self.configuration = configuration
        self.store = store
        self.token = Mutex(token)
        session = try service.openSession(SessionOptions(frontEnd: "web", language: configuration.language, isLongLived: true))
    }

    func listening(on port: Int) throws(CofferError) {
        self.port.store(port, ordering: .relaxed)
        let key = try BrowserKey(token: token.withLock { $0 }, port: port)
        browserKey.withLock { $0 = key }
    }

    /// The address served, and the names a request may give it.
    var served: ServedHost { ServedHost(address: configuration.address, port: port.load(ordering: .relaxed)) }

    /// The address as a browser writes it in `Host`.
    var authority: String { served.authority }

    /// The address to open, with its token.
    var address: String { "http://\(authority)/?token=\(token.withLock { $0 })" }

    /// An address that lets a browser in once, within two minutes.
    func oneTimeAddress() -> String { "http://\(authority)/?once=\(oneTimeCodes.make())" }

    // MARK: Who may ask

    /// Who may ask: the `Host` must be the address served (or `localhost` for 127.0.0.1), an
    /// `Origin` the page's own (``HTTPGuard``, the rule of every HTTP front end).
    var access: HTTPGuard { HTTPGuard(served: served) }

    /// The secret the request shows: the cookie (the browser key), or `Authorization: Bearer`
    /// (clients that are not browsers), or, for the page itself, `?token=`.
    func shownToken(_ exchange: HTTPExchange, allowQuery: Bool) -> String? {
        access.shownSecret(exchange, cookie: browserKey.withLock { $0?.cookieName }, query: allowQuery ? "token" : nil)
    }

    /// Whether `shown` is the token or the browser key of this server now.
    func isCurrent(_ shown: String?) -> Bool {
        HTTPGuard.matches(shown, [token.withLock { $0 }] + (browserKey.withLock { $0?.value }.map { [$0] } ?? []))
    }

    /// The header that gives the browser its key, and sends it on to the page without the
    /// secret in the address.
    private var cookieRedirect: String {
        guard let key = browserKey.withLock({ $0 }) else { return "Location: /\r\n" }
        return "Set-Cookie: \(key.cookieName)=\(key.value); Path=/; HttpOnly; SameSite=Strict\r\nLocation: /\r\n"
    }

    /// Watches the token file: when another `coffer serve --new-token` replaced it, the new
    /// one is used and every WebSocket opened with the old one is closed.
    func watchToken() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            guard let stored = store.read() else { continue }
            let changed = token.withLock { current -> Bool in
                defer { current = stored }
                return current != stored
            }
            guard changed else { continue }
            if let key = try? BrowserKey(token: stored, port: port.load(ordering: .relaxed)) { browserKey.withLock { $0 = key } }
            for socket in sockets.withLock({ Array($0.values) }) where !isCurrent(socket.token) { socket.close() }
        }
    }

    // MARK: HTTP

    func answer(_ exchange: HTTPExchange) -> Int {
        let path = exchange.path
        let method = exchange.method
        // Share links need no token, and answer whatever name the visitor's address used (a
        // reverse proxy's): they grant what was shared and nothing else.
        if path.hasPrefix("/s/") { return shareRequest(exchange) }
        if configuration.shareOnly {
            return respond(exchange, 404, text: "This server answers share links only.")
        }
        guard access.isServed(exchange) else {
            return respond(exchange, 421, text: "This server answers only to \(authority).")
        }
        if path == "/tus/" || path.hasPrefix("/tus/") {
            guard isCurrent(shownToken(exchange, allowQuery: false)) else {
                return respond(exchange, 403, text: "Uploads show the page's cookie or Authorization: Bearer TOKEN.")
            }
            return tus(exchange)
        }
        guard method == "GET" || method == "HEAD" else {
            return respond(exchange, 405, text: "Only GET is served here; uploads go to /tus/, everything else over the WebSocket.")
        }
        if path == "/", let code = exchange.queryValue("once") {
            // `--open`'s one-time address: traded for the cookie once, then worth nothing.
            guard oneTimeCodes.redeem(code) else {
                return respond(exchange, 403, text: "This address has been used (or is older than two minutes): open the address `coffer serve` printed.")
            }
            return respond(exchange, 303, text: "", headers: cookieRedirect)
        }
        let shown = shownToken(exchange, allowQuery: path == "/")
        guard isCurrent(shown) else {
            return respond(exchange, 403, text: "Open the address `coffer serve` printed: it carries the access token.")
        }
        switch path {
        case "/":
            if exchange.queryValue("token") != nil {
                // Trade the token in the address for the browser key, and drop it from the address bar.
                return respond(exchange, 303, text: "", headers: cookieRedirect)
            }
            return asset(exchange, PageAssets.index(in: language(of: exchange).rawValue), type: "text/html; charset=utf-8")
        case "/content": return content(exchange)
        case "/thumbnail": return thumbnail(exchange)
        case "/favicon.ico": return respond(exchange, 204, text: "")
        default:
            guard let file = PageAssets.files[path] else { return respond(exchange, 404, text: "Nothing here.") }
            return asset(exchange, file.body, type: file.type)
        }
    }

    /// Headers every answer carries: the page may load only its own script, style and images,
    /// may talk only to this server, and may not be framed.
    static let pagePolicy = "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
        + "img-src 'self' blob: data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
        + "frame-ancestors 'self'\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
        + "Cross-Origin-Opener-Policy: same-origin\r\nCache-Control: no-store\r\n"

    @discardableResult
    func respond(_ exchange: HTTPExchange, _ status: Int, text: String, headers: String = "") -> Int {
        exchange.answer(status, Array(text.utf8), type: "text/plain; charset=utf-8", headers: Self.pagePolicy + headers)
    }

    private func asset(_ exchange: HTTPExchange, _ body: [UInt8], type: String) -> Int {
        exchange.answer(200, body, type: type, headers: Self.pagePolicy)
    }

    /// Runs `body` as work of the HTTP session and waits for it here, on CivetWeb's thread;
    /// stopping the server cancels it (a thumbnail's decoder is killed), so no worker is held.
    func blocking<T: Sendable>(in session: Session? = nil,
                               _ body: @escaping @Sendable () async throws(CofferError) -> T) -> Result<T, CofferError> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, CofferError>?>(nil)
        (session ?? self.session).start {
            let outcome = await Result<T, CofferError>(catching: body)
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// The virtual path a request names in `?path=`, decoded by CivetWeb, checked by the model.
    func virtualPath(_ exchange: HTTPExchange) -> Result<VirtualPath, CofferError> {
        // A NUL (`%00`) would end the decoded text early and name another item: refused whole.
        if exchange.query.range(of: "%00") != nil {
            return .failure(CofferError(.invalidName, detail: "a path may not hold a NUL character"))
        }
        guard let text = exchange.queryValue("path") else {
            return .failure(CofferError(.invalidArgument, detail: "no path"))
        }
        return Result { () throws(CofferError) in try VirtualPath(parsing: text) }
    }

    func failure(_ exchange: HTTPExchange, _ error: CofferError, language: Language) -> Int {
        // The kind as every front end names it (RPC's `data.kind`), for programs and tests.
        respond(exchange, HTTPRules.status(for: error.kind), text: error.userMessage(in: language).description,
                headers: "X-Coffer-Error: \(error.kind.identifier)\r\n")
    }

    func language(of exchange: HTTPExchange) -> Language {
        exchange.prefersChinese() ? .simplifiedChinese : configuration.language
    }
}

extension Result where Failure == CofferError {
    /// The outcome of an async throwing body.
    init(catching body: () async throws(CofferError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
