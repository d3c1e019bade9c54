import CofferCore
import CofferHTTPServer
import CofferRuntime
import Foundation
import Synchronization

/// Who may use the page: its access token (`AppData/web-token`), the browser key the cookie
/// holds (``BrowserKey``), `--open`'s one-time codes, and the rules of every HTTP front end
/// (``HTTPGuard``) for the address served.
final class PageAccess: Sendable {
    private let listeningAddress: String
    private let isSecure: Bool
    private let store: AccessToken
    private let token: Mutex<String>
    /// What the browser's cookie holds, derived from the token and the port (``BrowserKey``).
    private let browserKey = Mutex<BrowserKey?>(nil)
    private let oneTimeCodes = OneTimeCodes()
    private let port = Atomic<Int>(0)

    init(address: String, token: String, store: AccessToken, isSecure: Bool = false) {
        self.listeningAddress = address
        self.isSecure = isSecure
        self.store = store
        self.token = Mutex(token)
    }

    func listening(on port: Int) throws(CofferError) {
        self.port.store(port, ordering: .relaxed)
        let key = try BrowserKey(token: token.withLock { $0 }, port: port)
        browserKey.withLock { $0 = key }
    }

    /// The address served, and the names a request may give it.
    var served: ServedHost { ServedHost(address: listeningAddress, port: port.load(ordering: .relaxed), isSecure: isSecure) }

    /// The address as a browser writes it in `Host`.
    var authority: String { served.authority }

    /// The address to open, with its token.
    var address: String { "\(served.scheme)://\(authority)/?token=\(token.withLock { $0 })" }

    /// An address that lets a browser in once, within two minutes.
    func oneTimeAddress() -> String { "\(served.scheme)://\(authority)/?once=\(oneTimeCodes.make())" }

    /// Trades a one-time code for the cookie, once.
    func redeem(_ code: String) -> Bool { oneTimeCodes.redeem(code) }

    /// The `Host` must be the address served (or `localhost` for 127.0.0.1), an `Origin` the
    /// page's own.
    var rules: HTTPGuard { HTTPGuard(served: served) }

    /// The secret the request shows: the cookie (the browser key), or `Authorization: Bearer`
    /// (clients that are not browsers), or, for the page itself, `?token=`.
    func shownToken(_ exchange: HTTPExchange, allowQuery: Bool) -> String? {
        rules.shownSecret(exchange, cookie: browserKey.withLock { $0?.cookieName }, query: allowQuery ? "token" : nil)
    }

    /// Whether `shown` is the token or the browser key of this server now.
    func isCurrent(_ shown: String?) -> Bool {
        HTTPGuard.matches(shown, [token.withLock { $0 }] + (browserKey.withLock { $0?.value }.map { [$0] } ?? []))
    }

    /// The header that gives the browser its key, and sends it on to the page without the
    /// secret in the address.
    var cookieRedirect: String {
        guard let key = browserKey.withLock({ $0 }) else { return "Location: /\r\n" }
        return "Set-Cookie: \(key.cookieName)=\(key.value); Path=/; HttpOnly; SameSite=Strict\r\nLocation: /\r\n"
    }

    /// Watches the token file: when another `coffer serve --new-token` replaced it, the new
    /// one is used, and `whenReplaced` runs (the sockets opened with the old one close).
    func watchToken(whenReplaced: @Sendable () -> Void) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            guard let stored = store.read() else { continue }
            let changed = token.withLock { current -> Bool in
                defer { current = stored }
                return current != stored
            }
            guard changed else { continue }
            if let key = try? BrowserKey(token: stored, port: port.load(ordering: .relaxed)) { browserKey.withLock { $0 = key } }
            whenReplaced()
        }
    }
}
