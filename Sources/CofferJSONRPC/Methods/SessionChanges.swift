import CofferCore
import FileService
import Foundation

/// One journaled change, as `session/changes` and `session/undo` give it.
struct ChangeResult: Encodable, Sendable {
    var sequence: Int
    var date: String
    var kind: String
    var path: String
    var source: String?
    var trashId: String?
    var version: Int?
    var tagsBefore: [String]?
    var tagsAfter: [String]?
    var undoneBy: String?
    var reason: String?
    var error: ItemFailure?

    init(_ change: JournalChange) {
        sequence = change.sequence
        date = Timestamp.iso8601(change.date)
        kind = change.kind.rawValue
        path = change.path.description
        source = change.source?.description
        trashId = change.trashID
        version = change.keptVersion
        tagsBefore = change.tagsBefore
        tagsAfter = change.tagsAfter
        undoneBy = change.undoneBy
    }
}

/// A session that changed something.
struct ChangedSessionResult: Encodable, Sendable {
    var id: String
    var frontEnd: String
    var started: String
    var count: Int
    var undone: Int
    var undoes: String?

    init(_ session: ChangedSession) {
        id = session.id
        frontEnd = session.frontEnd
        started = Timestamp.iso8601(session.started)
        count = session.count
        undone = session.undone
        undoes = session.undoes
    }
}

/// `session/changes`: the sessions that changed something (the most recent first, with this
/// connection's own as `current`), or with `session`, that session's changes, newest first.
struct SessionChangesMethod: RPCMethod {
    static let name = "session/changes"
    struct Params: Decodable, Sendable { var session: String? }
    struct Result: Encodable, Sendable {
        var current: String
        var sessions: [ChangedSessionResult]?
        var session: ChangedSessionResult?
        var changes: [ChangeResult]?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        guard let id = params.session else {
            return Result(current: context.session.id,
                          sessions: try await context.perform(ListChangedSessions()).map(ChangedSessionResult.init))
        }
        let (session, changes) = try await context.perform(ListSessionChanges(session: id))
        return Result(current: context.session.id, session: ChangedSessionResult(session), changes: changes.map(ChangeResult.init))
    }
}

/// `session/undo`: reverts a session's changes, newest first, leaving alone (and listing) what
/// another session changed since unless `force`; `dryRun` lists only. The undo is a session
/// of its own (`undoSession`), which can be undone in turn.
struct SessionUndoMethod: RPCMethod {
    static let name = "session/undo"
    struct Params: Decodable, Sendable {
        var session: String
        var dryRun: Bool?
        var force: Bool?
    }
    struct Result: Encodable, Sendable {
        var session: String
        var undoSession: String?
        var dryRun: Bool
        var reverted: [ChangeResult]
        var skipped: [ChangeResult]
        var failed: [ChangeResult]
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let report = try await context.perform(UndoChanges(session: params.session, dryRun: params.dryRun ?? false,
                                                           force: params.force ?? false))
        return Result(session: report.session, undoSession: report.undoSession, dryRun: report.dryRun,
                      reverted: report.reverted.map(ChangeResult.init),
                      skipped: report.skipped.map { skip in
                          var result = ChangeResult(skip.change)
                          result.reason = skip.reason
                          return result
                      },
                      failed: report.failed.map { failure in
                          var result = ChangeResult(failure.change)
                          result.error = ItemFailure(failure.error, context)
                          return result
                      })
    }
}
