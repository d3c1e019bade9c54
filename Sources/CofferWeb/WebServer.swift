public import CofferCore
public import CofferHTTPServer
import CofferPreview
public import CofferJSONRPC
import CofferRuntime
public import FileService
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
        /// Where WebDAV's locks are kept, so that they outlast the server; `nil` keeps them in
        /// memory only.
        public var davLocksPath: String?
        /// Where Finder's `.DS_Store` and `._` files written over WebDAV are kept, apart from
        /// the mounts; `nil` keeps them in memory only.
        public var davAppleFilesPath: String?
        /// Serve HTTPS with this certificate and key (`--tls-cert`, `--tls-key`); on an address
        /// other than loopback it is required, and only WebDAV and share links are answered there.
        public var tls: TLSFiles?

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
        // Beyond loopback, only share links go without TLS: WebDAV's password must not cross a network in the clear.
        if !ServedHost.isLoopback(configuration.address) && !configuration.shareOnly && configuration.tls == nil {
            fail("WebDAV on \(configuration.address) needs TLS (Configuration.tls); without it, serve share links only.")
            return 1
        }
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
                                    threads: configuration.maxConnections + 32, routes: handler, tls: configuration.tls)
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
        announce(configuration.shareOnly || handler.isRemote ? "\(handler.served.scheme)://\(handler.authority)" : handler.address)
        var redirect: String?
        if configuration.opensBrowser && !configuration.shareOnly && !handler.isRemote {
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
        await handler.socket.stopAll()
        // Downloads and thumbnails under way stop now, so CivetWeb's workers are free to end.
        handler.web.session.stopWork()
        handler.dav.session.stopWork()
        handler.shares.stopVisitors()
        server.stop()
        await handler.web.session.close()
        await handler.dav.session.close()
        await service.releaseBackgroundWork()
        return 0
    }
}

/// The web front end on the HTTP server: which route set answers a request, after the rules
/// every request passes. Each route set is a small type of its own: the page's access
/// (``PageAccess``), files (``FileRoutes``), share links (``ShareLinks``), resumable uploads
/// (``TusUploads``) and the page's WebSocket (``PageSocket``), over what they share
/// (``WebContext``).
final class WebHandler: HTTPRoutes, Sendable {
    let web: WebContext
    let access: PageAccess
    let files: FileRoutes
    let shares: ShareLinks
    let tus: TusUploads
    let socket: PageSocket
    let dav: DAVRoutes

    init(service: FileService, configuration: WebServer.Configuration, token: String, store: AccessToken) throws(CofferError) {
        web = try WebContext(service: service, configuration: configuration)
        access = PageAccess(address: configuration.address, token: token, store: store, isSecure: configuration.tls != nil)
        files = FileRoutes(web: web)
        shares = ShareLinks(web: web, files: files)
        tus = TusUploads(web: web)
        socket = PageSocket(web: web, access: access)
        dav = try DAVRoutes(web: web, access: access, files: files)
    }

    func listening(on port: Int) throws(CofferError) { try access.listening(on: port) }

    /// The address served, and the names a request may give it.
    var served: ServedHost { access.served }
    var authority: String { access.authority }
    /// Served on an address other than loopback (over TLS): WebDAV and share links only.
    var isRemote: Bool { web.isRemote }
    var address: String { access.address }
    func oneTimeAddress() -> String { access.oneTimeAddress() }

    /// Watches the token file (``PageAccess/watchToken(whenReplaced:)``); sockets opened with
    /// a token that was replaced are closed.
    func watchToken() async {
        await access.watchToken { [socket] in socket.closeStale() }
    }

    // MARK: Routing

    func answer(_ exchange: HTTPExchange) -> Int {
        let path = exchange.path
        let method = exchange.method
        // Share links need no token, and answer whatever name the visitor's address used (a
        // reverse proxy's): they grant what was shared and nothing else.
        if path.hasPrefix("/s/") { return shares.answer(exchange) }
        if web.configuration.shareOnly {
            return web.respond(exchange, 404, text: "This server answers share links only.")
        }
        if isRemote {
            // Beyond loopback (over TLS): WebDAV, with the token as its password, under whatever
            // name the client reached this machine by; the page stays this machine's (Decisions.md).
            if path == "/dav" || path.hasPrefix("/dav/") { return dav.answer(exchange) }
            return web.respond(exchange, 403, text: "On this address only WebDAV (/dav/) and share links are served; the file browser is served on 127.0.0.1.")
        }
        guard access.rules.isServed(exchange) else {
            return web.respond(exchange, 421, text: "This server answers only to \(authority).")
        }
        if path == "/dav" || path.hasPrefix("/dav/") { return dav.answer(exchange) }
        if path == "/tus/" || path.hasPrefix("/tus/") {
            guard access.isCurrent(access.shownToken(exchange, allowQuery: false)) else {
                return web.respond(exchange, 403, text: "Uploads show the page's cookie or Authorization: Bearer TOKEN.")
            }
            return tus.answer(exchange)
        }
        guard method == "GET" || method == "HEAD" else {
            return web.respond(exchange, 405, text: "Only GET is served here; uploads go to /tus/, everything else over the WebSocket.")
        }
        if path == "/", let code = exchange.queryValue("once") {
            // `--open`'s one-time address: traded for the cookie once, then worth nothing.
            guard access.redeem(code) else {
                return web.respond(exchange, 403, text: "This address has been used (or is older than two minutes): open the address `coffer serve` printed.")
            }
            return web.respond(exchange, 303, text: "", headers: access.cookieRedirect)
        }
        let shown = access.shownToken(exchange, allowQuery: path == "/")
        guard access.isCurrent(shown) else {
            return web.respond(exchange, 403, text: "Open the address `coffer serve` printed: it carries the access token.")
        }
        switch path {
        case "/":
            if exchange.queryValue("token") != nil {
                // Trade the token in the address for the browser key, and drop it from the address bar.
                return web.respond(exchange, 303, text: "", headers: access.cookieRedirect)
            }
            return asset(exchange, PageAssets.index(in: web.language(of: exchange).rawValue), type: "text/html; charset=utf-8")
        case "/content": return files.content(exchange)
        case "/thumbnail": return files.thumbnail(exchange)
        case "/favicon.ico": return web.respond(exchange, 204, text: "")
        default:
            guard let file = PageAssets.files[path] else { return web.respond(exchange, 404, text: "Nothing here.") }
            return asset(exchange, file.body, type: file.type)
        }
    }

    private func asset(_ exchange: HTTPExchange, _ body: [UInt8], type: String) -> Int {
        exchange.answer(200, body, type: type, headers: WebContext.pagePolicy)
    }

    // MARK: The page's WebSocket

    func acceptsWebSocket(_ exchange: HTTPExchange, socket peer: WebSocketPeer) -> Bool { socket.accepts(exchange, peer) }
    func webSocketOpened(_ peer: WebSocketPeer) { socket.opened(peer) }
    func webSocketReceived(_ peer: WebSocketPeer, bits: Int, _ payload: UnsafeRawBufferPointer) -> Bool {
        socket.received(peer, bits: bits, payload)
    }
    func webSocketClosed(_ peer: WebSocketPeer) { socket.closed(peer) }
}

extension Result where Failure == CofferError {
    /// The outcome of an async throwing body.
    init(catching body: () async throws(CofferError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
