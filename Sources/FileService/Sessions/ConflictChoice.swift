import CofferCore

/// How an operation that puts an item somewhere handles a name already taken: a
/// ``ConflictPolicy``, or `ask`.
public enum ConflictChoice: Sendable, Hashable {
    case policy(ConflictPolicy)
    /// Try without overwriting; if the name is taken, ask the session's
    /// ``Session/conflictQuestion`` and try again with its answer. A session with no one to
    /// ask fails with `fileExists`, as `.fail` does; no answer cancels.
    case ask

    public static let fail = ConflictChoice.policy(.fail)
    public static let keepBoth = ConflictChoice.policy(.keepBoth)
    public static let replace = ConflictChoice.policy(.replace)
}

/// Asked when a name is taken under ``ConflictChoice/ask``: the policy to try again with,
/// or `nil` to cancel.
public typealias ConflictQuestion = @Sendable (_ destination: VirtualPath) async -> ConflictPolicy?
