import CofferCore

/// What a front end means when a request leaves a choice out — one table for every front end,
/// read by the operations through their session, so that no front end picks a default of its
/// own (`Documentation/Contributor/Front-end defaults.md` shows it whole).
///
/// An operation asked with no conflict choice takes its front end's entry here, else its own
/// `defaultConflict`.
public struct FrontEndDefaults: Sendable {
    /// The conflict choice per operation, by its audit name (`copy`, `write`…), where the front
    /// end means something other than the operation's own default.
    public var conflicts: [String: ConflictChoice]

    public init(conflicts: [String: ConflictChoice] = [:]) {
        self.conflicts = conflicts
    }

    /// The REPL: a person at a terminal is asked, saying what is there; a script, with no one to
    /// ask, fails as `fail` does. Import and export keep both.
    public static let repl = FrontEndDefaults(conflicts: ["copy": .ask, "move": .ask, "rename": .ask, "restore": .ask])
    /// `coffer rpc`, and the web page over its WebSocket (whose own question asks after a `fail`):
    /// each operation's own default — a copy keeps both, a move, rename, restore, write or
    /// upload fails, an import or export keeps both.
    public static let rpc = FrontEndDefaults()
    /// `coffer mcp`, as the reference filesystem server behaves: a copy fails on a taken name
    /// like a move, and `write_file` replaces (what it replaces goes to the trash).
    public static let mcp = FrontEndDefaults(conflicts: ["copy": .fail, "write": .replace])

    /// The table's row for the front end named `frontEnd` (`repl`, `rpc`, `web`, `mcp`); another
    /// front end — an application's own — gets each operation's own default.
    public static func standard(for frontEnd: String) -> FrontEndDefaults {
        switch frontEnd {
        case "repl": .repl
        case "mcp": .mcp
        default: .rpc
        }
    }
}

extension OperationContext {
    /// The conflict choice an operation of type `Operation` runs with: the one its request
    /// gave, else its front end's, else the operation's own.
    public func conflict<Operation: FileOperation>(_ given: ConflictChoice?, for _: Operation.Type,
                                                  otherwise fallback: ConflictChoice) -> ConflictChoice {
        given ?? session.defaults.conflicts[Operation.name] ?? fallback
    }

    /// The same for an operation that cannot ask (an import, an export, an upload): a front
    /// end's `ask` falls back to the operation's own policy.
    public func conflictPolicy<Operation: FileOperation>(_ given: ConflictPolicy?, for _: Operation.Type,
                                                        otherwise fallback: ConflictPolicy) -> ConflictPolicy {
        if let given { return given }
        if case .policy(let policy)? = session.defaults.conflicts[Operation.name] { return policy }
        return fallback
    }
}
