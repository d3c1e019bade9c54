public import CofferCore

/// The sessions that changed something, the most recent first: each with its front end,
/// when it began changing, and how many changes it made (and how many are undone).
///
/// Fails with `unsupported` (detail `changes`) on a service that keeps no journal.
public struct ListChangedSessions: FileOperation {
    public static let name = "changes"

    /// At most this many sessions.
    public var limit: Int

    /// Lists the latest `limit` sessions that changed something.
    public init(limit: Int = 50) { self.limit = limit }

    public func run(in context: OperationContext) async throws(CofferError) -> [ChangedSession] {
        try await context.service.changedSessions(limit: limit)
    }
}

/// The changes of one session, newest first, each with what reverts it.
///
/// Fails with `noSuchFile` (detail `no-session`) for a session that changed nothing.
public struct ListSessionChanges: FileOperation {
    public static let name = "sessionChanges"

    /// The session's ``Session/id``.
    public var session: String

    /// Lists the changes of session `session`.
    public init(session: String) { self.session = session }

    public func run(in context: OperationContext) async throws(CofferError) -> (ChangedSession, [JournalChange]) {
        try await context.service.changes(ofSession: session)
    }
}

/// Reverts a session's changes, newest first (`FileService.undo(session:dryRun:force:frontEnd:)`, the engine's):
/// an item another session changed since is left alone and listed, unless `force`. The undo
/// is a session of its own, which can be undone in turn. With `dryRun`, only lists what it
/// would revert and what it would leave alone.
public struct UndoChanges: FileOperation {
    public static let name = "undo"
    public static let changesFiles = true

    /// The session to undo.
    public var session: String
    /// List only, changing nothing.
    public var dryRun: Bool
    /// Revert also what changed since (what is there is kept as a version or in the trash).
    public var force: Bool

    /// Undoes session `session`.
    public init(session: String, dryRun: Bool = false, force: Bool = false) {
        self.session = session
        self.dryRun = dryRun
        self.force = force
    }

    public func run(in context: OperationContext) async throws(CofferError) -> UndoReport {
        try await context.service.undo(session: session, dryRun: dryRun, force: force, frontEnd: context.session.frontEnd)
    }

    public func auditedPaths(for outcome: Result<UndoReport, CofferError>) -> [String] { ["session:" + session] }

    public func auditRecords(for outcome: Result<UndoReport, CofferError>) -> [AuditRecord] {
        var record = AuditRecord(paths: auditedPaths(for: outcome), outcome: outcome)
        if let report = try? outcome.get() {
            record.extra["reverted"] = String(report.reverted.count)
            if !report.skipped.isEmpty { record.extra["skipped"] = String(report.skipped.count) }
            if let undo = report.undoSession { record.extra["undoSession"] = undo }
            if dryRun { record.extra["dryRun"] = "true" }
        }
        return [record]
    }
}
