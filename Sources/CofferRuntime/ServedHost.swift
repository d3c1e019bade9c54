/// The names a request may give a local server in `Host` (and a page of it in `Origin`): the
/// address it listens on with its port, and `localhost` when that address is 127.0.0.1. Any
/// other name — one a page of another site got pointed here (DNS rebinding) — is not this
/// server. One rule for every server Coffer runs (the web page's, MCP over HTTP).
public struct ServedHost: Sendable {
    public let address: String
    public let port: Int
    /// Whether it is served over TLS: its pages' origins are then `https://`.
    public let isSecure: Bool

    public init(address: String, port: Int) {
        self.init(address: address, port: port, isSecure: false)
    }

    /// A server on `address` and `port`, over TLS when `isSecure`.
    public init(address: String, port: Int, isSecure: Bool) {
        self.address = address
        self.port = port
        self.isSecure = isSecure
    }

    /// `https` over TLS, else `http`.
    public var scheme: String { isSecure ? "https" : "http" }

    /// Whether `address` is this machine's loopback (`127.x.x.x`, `::1`, `localhost`): the
    /// only addresses a server that can change every file listens on unless the user names
    /// another (the web page's browser: never).
    public static func isLoopback(_ address: String) -> Bool {
        address == "localhost" || address == "::1" || address.hasPrefix("127.")
    }

    /// The address as a client writes it in `Host` (`127.0.0.1:8790`, `[::1]:8790`).
    public var authority: String {
        "\(address.contains(":") ? "[\(address)]" : address):\(port)"
    }

    private var names: Set<String> {
        var names: Set<String> = [authority.lowercased()]
        if address == "127.0.0.1" { names.insert("localhost:\(port)") }
        return names
    }

    /// Whether `host` (a `Host` header) names this server.
    public func isNamed(by host: String?) -> Bool {
        guard let host else { return false }
        return names.contains(host.lowercased())
    }

    /// Whether `origin` (an `Origin` header) is a page of this server.
    public func isOrigin(_ origin: String) -> Bool {
        let origin = origin.lowercased()
        return names.contains { scheme + "://" + $0 == origin }
    }
}
