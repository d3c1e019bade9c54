import CofferCore
import CofferRuntime
import FileService
import Foundation

extension CommandInterpreter {
    /// `changes [--json] [ID]`: the sessions that changed something, or one session's changes.
    func changes(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "changes")
        guard arguments.operands.count <= 1 else { throw usage("changes") }
        let json = arguments.flags.contains("json")
        guard let id = arguments.operands.first else {
            let sessions = try await perform(ListChangedSessions())
            if json { return try printJSON(["sessions": sessions.map(Self.json)]) }
            guard !sessions.isEmpty else {
                output.line(LocalizedText("No session has changed anything yet.", "还没有会话做过更改。")(language))
                return
            }
            for session in sessions {
                let mark = session.id == self.session.id ? LocalizedText(" (this session)", "（本会话）")(language) : ""
                let undone = session.undone == 0 ? "" : LocalizedText(", \(session.undone) undone", "，已撤销 \(session.undone) 个")(language)
                let undoes = session.undoes.map { LocalizedText(", undoes \($0)", "，撤销了 \($0)")(language) } ?? ""
                output.line("\(session.id)  \(Formatting.padded(session.frontEnd, to: 5))  \(Formatting.dateWithSeconds(session.started))  "
                            + LocalizedText("\(session.count) \(session.count == 1 ? "change" : "changes")", "\(session.count) 个更改")(language)
                            + undone + undoes + mark)
            }
            return
        }
        let (session, changes) = try await perform(ListSessionChanges(session: id))
        if json { return try printJSON(["session": Self.json(session), "changes": changes.map(Self.json)]) }
        for change in changes { output.line(describe(change)) }
    }

    /// `undo [--dry-run] [--force] [--json] ID`.
    func undo(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "undo")
        guard arguments.operands.count == 1 else { throw usage("undo") }
        let dryRun = arguments.flags.contains("dry-run")
        let report = try await perform(UndoChanges(session: arguments.operands[0], dryRun: dryRun,
                                                   force: arguments.flags.contains("force")))
        if arguments.flags.contains("json") { return try printJSON(Self.json(report, language: language)) }
        for change in report.reverted {
            output.line((dryRun ? LocalizedText("would undo ", "将撤销 ")(language) : LocalizedText("undid ", "已撤销 ")(language))
                        + describe(change))
        }
        for skip in report.skipped {
            output.line(LocalizedText("left alone ", "未处理 ")(language) + describe(skip.change) + ": " + skip.reason)
        }
        for failure in report.failed {
            self.report(failure.error)
            output.line(LocalizedText("failed ", "失败 ")(language) + describe(failure.change))
        }
        if let undo = report.undoSession {
            output.line(LocalizedText("This undo is session \(undo): “undo \(undo)” reverts it.",
                                      "本次撤销是会话 \(undo)：“undo \(undo)” 可将其还原。")(language))
        } else if report.reverted.isEmpty && report.skipped.isEmpty && report.failed.isEmpty {
            output.line(LocalizedText("Nothing to undo.", "没有可撤销的更改。")(language))
        }
        if !report.failed.isEmpty { throw Reported() }
    }

    /// One change on a line: its number, date, what and where.
    private func describe(_ change: JournalChange) -> String {
        var text = "#\(change.sequence) \(Formatting.dateWithSeconds(change.date)) \(change.kind.rawValue) \(change.path.description)"
        if let source = change.source { text += " ← \(source.description)" }
        if let version = change.keptVersion { text += LocalizedText(" (replaced content: version \(version))", "（被替换的内容：版本 \(version)）")(language) }
        if let before = change.tagsBefore, let after = change.tagsAfter {
            text += " [\(before.joined(separator: ", "))] → [\(after.joined(separator: ", "))]"
        }
        if let undo = change.undoneBy { text += LocalizedText(" (undone by \(undo))", "（已由 \(undo) 撤销）")(language) }
        return text
    }

    static func json(_ session: ChangedSession) -> [String: Any] {
        var entry: [String: Any] = ["id": session.id, "frontEnd": session.frontEnd, "started": Timestamp.iso8601(session.started),
                                    "count": session.count, "undone": session.undone]
        if let undoes = session.undoes { entry["undoes"] = undoes }
        return entry
    }

    static func json(_ change: JournalChange) -> [String: Any] {
        var entry: [String: Any] = ["sequence": change.sequence, "date": Timestamp.iso8601(change.date),
                                    "kind": change.kind.rawValue, "path": change.path.description]
        if let source = change.source { entry["source"] = source.description }
        if let trashID = change.trashID { entry["trashId"] = trashID }
        if let version = change.keptVersion { entry["version"] = version }
        if let tags = change.tagsBefore { entry["tagsBefore"] = tags }
        if let tags = change.tagsAfter { entry["tagsAfter"] = tags }
        if let undo = change.undoneBy { entry["undoneBy"] = undo }
        return entry
    }

    static func json(_ report: UndoReport, language: Language) -> [String: Any] {
        var object: [String: Any] = [
            "session": report.session, "dryRun": report.dryRun, "reverted": report.reverted.map(json),
            "skipped": report.skipped.map { skip -> [String: Any] in
                var entry = json(skip.change)
                entry["reason"] = skip.reason
                return entry
            },
            "failed": report.failed.map { failure -> [String: Any] in
                var entry = json(failure.change)
                entry["error"] = failure.error.userMessage(in: language).text
                return entry
            },
        ]
        if let undo = report.undoSession { object["undoSession"] = undo }
        return object
    }
}
