public import CofferRuntime

/// Who may ask a server that listens on `served`: one rule for every HTTP front end (the web
/// page, its WebSocket, tus, MCP's Streamable HTTP). Share links, which answer any name a
/// reverse proxy gives them, are the one route set that does not ask it.
public struct HTTPGuard: Sendable {
    public let served: ServedHost

    public init(served: ServedHost) { self.served = served }

    /// Whether the request's `Host` names this server: a page of another site that got its
    /// name pointed here (DNS rebinding) does not.
    public func isServed(_ exchange: HTTPExchange) -> Bool { served.isNamed(by: exchange.host) }

    /// Whether the request may come from where it says: no `Origin` (a client that is not a
    /// browser), or a page of this server. `null` and every other site are refused.
    public func originAllowed(_ exchange: HTTPExchange) -> Bool {
        guard let origin = exchange.origin else { return true }
        return served.isOrigin(origin)
    }

    /// The secret a request shows, in the order a browser and other clients show it: `?NAME=`
    /// (only where `query` names one: the page's first load), the cookie `cookie`, then
    /// `Authorization: Bearer`. `nil` when it shows none.
    public func shownSecret(_ exchange: HTTPExchange, cookie: String?, query: String? = nil) -> String? {
        if let query, let value = exchange.queryValue(query) { return value }
        if let cookie, let value = exchange.cookie(cookie) { return value }
        return exchange.bearerToken
    }

    /// Whether `shown` is one of `secrets`, compared in constant time.
    public static func matches(_ shown: String?, _ secrets: [String]) -> Bool {
        guard let shown else { return false }
        return secrets.contains { AccessToken.same(shown, $0) }
    }
}
