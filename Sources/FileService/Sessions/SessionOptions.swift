public import CofferCore

/// What a front end says about itself when it opens a ``Session``.
public struct SessionOptions: Sendable {
    /// Who is asking, as the audit log records it: `repl`, `rpc`, or an application's own.
    public var frontEnd: String
    /// The language messages are written in; a session may change it later (RPC's
    /// `initialize` names one).
    public var language: Language
    /// Which host paths the session may import from, export to and open in place. The
    /// service's container is never one of them.
    public var hostAccess: HostAccess
    /// Whether the session stays open while a person or a program works — the interactive
    /// REPL, an RPC connection — rather than for one command. While one is open the service
    /// keeps its search index live (watching the mount) and sweeps abandoned uploads; a
    /// short session's searches bring the index up to date themselves.
    public var isLongLived: Bool
    /// What requests that leave a choice out mean: the standard table's row for `frontEnd`
    /// unless given (``FrontEndDefaults``).
    public var defaults: FrontEndDefaults
    /// Where the one asking connects from (a share link's visitor: the socket's address, or
    /// the first of `X-Forwarded-For` behind a proxy the user set up), for the audit log;
    /// `nil` for a front end on this machine.
    public var client: String?
    /// The share link a visitor came by (its ID), for the audit log; `nil` for everyone else.
    public var share: String?

    /// Options for a front end named `frontEnd`; by default English, no host access, a
    /// short session, and the standard table's defaults for `frontEnd`
    /// (``FrontEndDefaults/standard(for:)``).
    public init(frontEnd: String, language: Language = .english, hostAccess: HostAccess = .nowhere,
                isLongLived: Bool = false, defaults: FrontEndDefaults? = nil, client: String? = nil,
                share: String? = nil) {
        self.frontEnd = frontEnd
        self.client = client
        self.share = share
        self.language = language
        self.hostAccess = hostAccess
        self.isLongLived = isLongLived
        self.defaults = defaults ?? .standard(for: frontEnd)
    }
}
