public import CofferCore

/// One thing a session can do, as a value: what it needs, what it means by default, what
/// it returns, and what the audit log records of it.
///
/// Every front end expresses a request as one of these — the REPL's `cp` and RPC's
/// `files/copy` both make a ``CopyItem`` — so its defaults, its destination rule and its
/// audit entry exist once. ``Session/perform(_:progress:)`` runs it.
///
/// An operation of an application's own conforms as Coffer's do: a `name` for the audit
/// log, `changesFiles` when it may change something, and a `run(in:)` that does the work
/// through the context's service and session, throwing a `CofferError`.
public protocol FileOperation: Sendable {
    /// What performing it gives back (`Void` for an operation that only acts).
    associatedtype Output: Sendable

    /// The operation's name in the audit log (`copy`).
    static var name: String { get }
    /// Whether it may change something; then every run is audited, failed ones too.
    static var changesFiles: Bool { get }
    /// Whether every run is in the audit log: what changes something, and what a visitor
    /// without the access token does (a share link's password tried, a shared file sent).
    static var isAudited: Bool { get }

    /// What the audit log records of a run that ended with `outcome`: one record for most
    /// operations, one per item for those that act on several at once.
    func auditRecords(for outcome: Result<Output, CofferError>) -> [AuditRecord]

    /// The virtual paths one record names (the default `auditRecords` uses them).
    func auditedPaths(for outcome: Result<Output, CofferError>) -> [String]

    /// Does the work, in `context`'s session; the caller is ``Session/perform(_:progress:)``,
    /// which adds the audit entry around it.
    ///
    /// - Throws: the `CofferError` that stopped it; `cancelled` when its task was cancelled,
    ///   with nothing half-done left.
    func run(in context: OperationContext) async throws(CofferError) -> Output
}

/// A read that can also be had at once, on the caller's thread, where the storage answers
/// without waiting (`ImmediateMetadata`): a front end answers it where it stands.
public protocol ImmediateOperation: FileOperation {
    /// The outcome now, or `nil` when it cannot be had without waiting (then use `run`).
    func runImmediately(in service: FileService) throws(CofferError) -> Output?
}

extension FileOperation {
    public static var changesFiles: Bool { false }
    public static var isAudited: Bool { changesFiles }

    public func auditedPaths(for outcome: Result<Output, CofferError>) -> [String] { [] }

    public func auditRecords(for outcome: Result<Output, CofferError>) -> [AuditRecord] {
        [AuditRecord(paths: auditedPaths(for: outcome), outcome: outcome)]
    }
}

/// One line of the audit log, before the session adds the time and who asked.
public struct AuditRecord: Sendable, Hashable {
    /// Virtual paths (never a host path).
    public var paths: [String]
    /// `ok`, or the error's kind.
    public var outcome: String
    /// The trash IDs of what the operation's replaces moved to the trash.
    public var trashed: [String] = []
    /// What else the line says (a share's ID, the bytes sent); the session adds its client's
    /// address (``SessionOptions/client``).
    public var extra: [String: String] = [:]

    /// A record naming `paths`, with `outcome` as the log writes it (`ok`, or an error's kind).
    public init(paths: [String], outcome: String) {
        self.paths = paths
        self.outcome = outcome
    }

    /// A record naming `paths`, with the outcome of a run (``outcome(of:)``).
    public init<T>(paths: [String], outcome: Result<T, CofferError>) {
        self.init(paths: paths, outcome: AuditRecord.outcome(of: outcome))
    }

    /// `ok`, or the kind of the error.
    public static func outcome<T>(of result: Result<T, CofferError>) -> String {
        switch result {
        case .success: "ok"
        case .failure(let error): error.kind.identifier
        }
    }
}

/// What an operation may use while it runs: its session (language, host access, the
/// conflict question), the service, and the caller's progress display.
public struct OperationContext: Sendable {
    /// The session the operation is performed in.
    public let session: Session
    let progress: (any ProgressDisplay)?

    /// The service the session is open on.
    public var service: FileService { session.service }
    /// The language of the session's messages.
    public var language: Language { session.language }

    /// Runs `body` with a reporter; with a display, the attempt is shown from start to end.
    public nonisolated(nonsending) func withProgress<T>(
        _ body: (ProgressReporter) async throws(CofferError) -> T
    ) async throws(CofferError) -> T {
        guard let progress else { return try await body(.none) }
        let reporter = progress.begin()
        defer { progress.end() }
        return try await body(reporter)
    }

    /// Runs `attempt` under `choice`: with a policy, once; with ``ConflictChoice/ask``,
    /// first with `.fail`, and if `destination` is taken, again with the session's answer.
    /// Each attempt gets its own progress.
    public nonisolated(nonsending) func settling<T>(
        _ choice: ConflictChoice, about destination: VirtualPath,
        _ attempt: (ConflictPolicy, ProgressReporter) async throws(CofferError) -> T
    ) async throws(CofferError) -> T {
        var policy: ConflictPolicy
        switch choice {
        case .policy(let chosen): policy = chosen
        case .ask: policy = .fail
        }
        while true {
            do {
                return try await withProgress { reporter throws(CofferError) in try await attempt(policy, reporter) }
            } catch where error.kind == .fileExists && choice == .ask && policy == .fail {
                guard let question = session.conflictQuestion else { throw error }
                guard let answer = await question(await NameConflict.found(at: destination, in: service))
                else { throw CofferError(.cancelled, path: destination) }
                policy = answer
            }
        }
    }
}
