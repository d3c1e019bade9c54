import CofferCore
import FileService

struct ListVersionsTool: MCPTool {
    static let name = "list_versions"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        let versions = try await context.perform(ListVersions(path))
        let entries: [JSONValue] = versions.map { version in
            var entry: [String: JSONValue] = ["id": .integer(Int64(version.id)), "date": JSONValue(version.date),
                                              "size": .integer(version.size), "keptAt": JSONValue(version.keptAt)]
            if let frontEnd = version.frontEnd { entry["by"] = .string(frontEnd) }
            return .object(entry)
        }
        let shown = context.paths.display(path, style)
        let lines = versions.map { version in
            "\(version.id)\t\(Timestamp.iso8601(version.date))\t\(version.size) bytes\t\(version.frontEnd ?? "-")"
        }
        return ToolOutput(text: lines.isEmpty ? "\(shown) has no versions." : "Versions of \(shown), newest first:\n" + lines.joined(separator: "\n"),
                          fields: ["versions": .array(entries)])
    }
}

struct RestoreVersionTool: MCPTool {
    static let name = "restore_version"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        guard let id = try arguments.optionalInteger("id", minimum: 1) else {
            throw CofferError(.invalidArgument, detail: "“id” is missing")
        }
        let node = try await context.perform(RestoreVersion(Int(id), of: path, as: try arguments.optionalString("as")))
        return ToolOutput(text: "Restored version \(id) of \(context.paths.display(path, style)) to \(context.paths.display(node.path, style)); what was there is kept as a version.",
                          fields: ["restored": nodeJSON(node, style, context.paths)])
    }
}

struct UndoChangesTool: MCPTool {
    static let name = "undo_changes"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let session = try arguments.optionalString("session") ?? context.session.id
        let dryRun = try arguments.bool("dryRun")
        let report = try await context.perform(UndoChanges(session: session, dryRun: dryRun, force: try arguments.bool("force")))
        func entry(_ change: JournalChange) -> JSONValue {
            var fields: [String: JSONValue] = ["kind": .string(change.kind.rawValue),
                                               "path": .string(context.paths.display(change.path, .host))]
            if let source = change.source { fields["source"] = .string(context.paths.display(source, .host)) }
            return .object(fields)
        }
        func line(_ change: JournalChange) -> String {
            "\(change.kind.rawValue) \(context.paths.display(change.path, .host))"
                + (change.source.map { " (from \(context.paths.display($0, .host)))" } ?? "")
        }
        var lines = report.reverted.map { (dryRun ? "would undo " : "undid ") + line($0) }
        lines += report.skipped.map { "left alone " + line($0.change) + ": " + $0.reason }
        lines += report.failed.map { "failed " + line($0.change) + ": " + $0.error.userMessage(in: context.language).text }
        if lines.isEmpty { lines = ["Nothing to undo in session \(session)."] }
        if let undo = report.undoSession { lines.append("This undo is session \(undo); undo_changes with session \(undo) reverts it.") }
        var fields: [String: JSONValue] = [
            "session": .string(session), "dryRun": .bool(dryRun), "reverted": .array(report.reverted.map(entry)),
            "skipped": .array(report.skipped.map { skip in
                guard case .object(var fields) = entry(skip.change) else { return entry(skip.change) }
                fields["reason"] = .string(skip.reason)
                return .object(fields)
            }),
            "failed": .array(report.failed.map { failure in
                guard case .object(var fields) = entry(failure.change) else { return entry(failure.change) }
                fields["error"] = .string(failure.error.userMessage(in: context.language).text)
                return .object(fields)
            }),
        ]
        if let undo = report.undoSession { fields["undoSession"] = .string(undo) }
        return ToolOutput(text: lines.joined(separator: "\n"), fields: fields)
    }
}
