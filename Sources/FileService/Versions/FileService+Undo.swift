@_spi(Engine) public import CofferCore
import Foundation

/// A change an undo left alone, and why.
public struct UndoSkip: Sendable, Hashable {
    /// The change.
    public var change: JournalChange
    /// Why, in a sentence (in English; ``laterSession`` says who when it was a session).
    public var reason: String
    /// The session whose later change kept it, when one did.
    public var laterSession: String?
}

/// What undoing a session did, or would do (a dry run).
public struct UndoReport: Sendable {
    /// The session undone.
    public var session: String
    /// The session the undo itself is, which can be undone in turn; `nil` for a dry run or
    /// an undo that changed nothing.
    public var undoSession: String?
    /// Whether nothing was changed.
    public var dryRun: Bool
    /// The changes reverted (or to revert), newest first.
    public var reverted: [JournalChange]
    /// The changes left alone because the item changed since.
    public var skipped: [UndoSkip]
    /// The changes whose revert failed, with the error.
    public var failed: [UndoFailure]
}

/// A change whose revert failed.
public struct UndoFailure: Sendable {
    /// The change.
    public var change: JournalChange
    /// What stopped it.
    public var error: CofferError
}

extension FileService {
    /// The sessions that changed something, the most recent first.
    @_spi(Engine) public func changedSessions(limit: Int = 50) async throws(CofferError) -> [ChangedSession] {
        try await require(VersionStore.self, "changes").changedSessions(limit: limit)
    }

    /// The changes of session `id`, newest first.
    /// - Throws: `noSuchFile` (detail `no-session`) for a session that changed nothing.
    @_spi(Engine) public func changes(ofSession id: String) async throws(CofferError) -> (ChangedSession, [JournalChange]) {
        let store = try require(VersionStore.self, "changes")
        guard let session = try await store.changedSession(id) else { throw CofferError(.noSuchFile, detail: "no-session") }
        return (session, try await store.changes(of: id))
    }

    /// Reverts the changes of session `id` that are not reverted yet, newest first: moved
    /// items go back, trashed ones come back, made ones go to the trash, replaced content
    /// comes back from its version, tags are set back.
    ///
    /// An item that another session changed since (or that changed behind Coffer's back) is
    /// left alone and listed, unless `force`: then it is reverted too, what is there now going
    /// to the trash or among the versions as every replace's does. The undo is a session of
    /// its own (`frontEnd`), journaled, so it can be undone in turn.
    @_spi(Engine) public func undo(session id: String, dryRun: Bool, force: Bool,
                                   frontEnd: String) async throws(CofferError) -> UndoReport {
        let store = try require(VersionStore.self, "changes")
        let (_, all) = try await changes(ofSession: id)
        let pending = all.filter { $0.undoneBy == nil }
        let undoID = Session.makeID()
        var report = UndoReport(session: id, undoSession: nil, dryRun: dryRun, reverted: [], skipped: [], failed: [])
        let journal = ReplacedItems(author: ChangeAuthor(session: undoID, frontEnd: frontEnd))
        var seen = Set<VirtualPath>()
        var recorded = 0
        for change in pending {
            if Task.isCancelled { throw CofferError(.cancelled) }
            // The session's latest change to the item: none later put anything there, or moved it away.
            let isLatest = !seen.contains(change.path)
            seen.insert(change.path)
            if let source = change.source { seen.insert(source) }
            if !force, let skip = try await reasonToKeep(change, isLatest: isLatest, undoID: undoID, store: store) {
                report.skipped.append(skip)
                continue
            }
            if dryRun {
                report.reverted.append(change)
                continue
            }
            let outcome: Result<Void, CofferError> = await ReplacedItems.$current.withValue(journal) {
                do throws(CofferError) {
                    try await revert(change, store: store)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            // Journaled change by change, with the mark on the change reverted in the same
            // transaction: an undo cut short (killed) can be undone as far as it went, and
            // finished by undoing the session again.
            let made = journal.changes
            let fresh = made.count > recorded ? Array(made[recorded...]) : []
            recorded = made.count
            switch outcome {
            case .success:
                try await store.record(fresh, session: undoID, frontEnd: frontEnd, undoes: id, marking: change.sequence)
                report.reverted.append(change)
                report.undoSession = undoID
            case .failure(let error):
                if !fresh.isEmpty {
                    try await store.record(fresh, session: undoID, frontEnd: frontEnd, undoes: id)
                    report.undoSession = undoID
                }
                report.failed.append(UndoFailure(change: change, error: error))
            }
        }
        return report
    }

    /// Why `change` must be left alone: a later change of another session (not this undo) to its item (or
    /// to what holds it, or what it holds), or, for the session's latest change to the item,
    /// a file no longer as the change left it.
    private func reasonToKeep(_ change: JournalChange, isLatest: Bool, undoID: String, store: VersionStore) async throws(CofferError) -> UndoSkip? {
        if let later = try await store.laterChange(touching: change.path, after: change.sequence, otherThan: change.session,
                                                    orUndo: undoID) {
            let who = try await store.changedSession(later.session)
            return UndoSkip(change: change, reason: "changed since by \(who?.frontEnd ?? "another") session \(later.session) "
                            + "(\(later.kind.rawValue) \(later.path.description))", laterSession: later.session)
        }
        guard isLatest, let state = change.state, change.kind != .trash else { return nil }
        let now = try? await stat(change.path)
        if now?.version?.description != state {
            return UndoSkip(change: change, reason: now == nil ? "no longer there" : "changed since, outside this session",
                            laterSession: nil)
        }
        return nil
    }

    /// Reverts one change, through the engine (so the revert is journaled and displaces
    /// nothing for good).
    private func revert(_ change: JournalChange, store: VersionStore) async throws(CofferError) {
        let path = change.path
        switch change.kind {
        case .create, .replace, .restore:
            if let version = change.keptVersion {
                try await store.reassign(version, to: path)
                try await restoreVersion(version, of: path, to: path, conflict: .replace)
                return
            }
            if try await exists(path) { try await trash(path) }
            try await putBackDisplaced(change, store: store)
        case .folder:
            if try await exists(path) { try await trash(path) }
        case .move:
            guard let source = change.source else { return }
            try await move(path, to: source, conflict: .fail)
            try await putBackDisplaced(change, store: store)
        case .trash:
            guard let trashID = change.trashID else { return }
            try await restore(trashID, conflict: .fail)
        case .tag:
            let before = change.tagsBefore ?? [], now = try await tags(of: path)
            _ = try await changeTags(of: path, adding: before.filter { !now.contains($0) }, removing: now.filter { !before.contains($0) })
        }
    }

    /// Puts back at the change's path what the change displaced there.
    private func putBackDisplaced(_ change: JournalChange, store: VersionStore) async throws(CofferError) {
        if let version = change.keptVersion {
            try await store.reassign(version, to: change.path)
            try await restoreVersion(version, of: change.path, to: change.path, conflict: .fail)
        } else if let trashID = change.displacedTrashID {
            try await restore(trashID, conflict: .fail)
        }
    }
}
