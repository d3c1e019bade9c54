import CofferCore
import CofferRuntime
import FileService
import Foundation

extension CommandInterpreter {
    /// `versions [--json] PATH`: the versions of a file, newest first; `versions --prune …`
    /// drops what the retention rules do not keep.
    func versions(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "versions")
        if arguments.flags.contains("prune") { return try await pruneVersions(arguments) }
        for option in Self.pruneOptions where arguments.options[option] != nil || arguments.flags.contains(option) {
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "--\(option) goes with --prune", "--\(option) 需与 --prune 一起使用")(language))
        }
        guard arguments.operands.count == 1 else { throw usage("versions") }
        let path = try resolve(arguments.operands[0])
        let versions = try await perform(ListVersions(path))
        if arguments.flags.contains("json") {
            return try printJSON(["path": path.description, "versions": versions.map(Self.json)])
        }
        guard !versions.isEmpty else {
            output.line(LocalizedText("\(path.description) has no versions.", "\(path.description) 没有历史版本。")(language))
            return
        }
        let rows = versions.map { version in
            [String(version.id), Formatting.dateWithSeconds(version.date), Formatting.size(version.size),
             [version.frontEnd, version.session].compactMap { $0 }.joined(separator: " ")]
        }
        var widths = [0, 0, 0]
        for row in rows { for column in 0..<3 { widths[column] = max(widths[column], Formatting.width(row[column])) } }
        for row in rows {
            output.line("\(Formatting.leftPadded(row[0], to: widths[0]))  \(Formatting.padded(row[1], to: widths[1]))  "
                        + "\(Formatting.leftPadded(row[2], to: widths[2]))  \(row[3])")
        }
    }

    private static let pruneOptions = ["keep-last", "keep-hourly", "keep-daily", "keep-weekly", "keep-monthly",
                                       "keep-within", "max-size", "dry-run"]

    /// `versions --prune [rules] [--max-size SIZE] [--dry-run] [--json] [PATH]`.
    private func pruneVersions(_ arguments: ParsedArguments) async throws {
        guard arguments.operands.count <= 1 else { throw usage("versions") }
        let below = try arguments.operands.first.map { (text) throws(CofferError) in try resolve(text) }
        func count(_ option: String) throws(CofferError) -> Int? {
            guard let text = arguments.options[option] else { return nil }
            guard let number = Int(text), number >= 0 else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "--\(option) needs a whole number (0 or more), not “\(text)”",
                    "--\(option) 需要一个非负整数，而不是“\(text)”")(language))
            }
            return number
        }
        var policy = RetentionPolicy()
        policy.keepLast = try count("keep-last")
        policy.keepHourly = try count("keep-hourly")
        policy.keepDaily = try count("keep-daily")
        policy.keepWeekly = try count("keep-weekly")
        policy.keepMonthly = try count("keep-monthly")
        if let text = arguments.options["keep-within"] {
            guard let duration = RetentionDuration(parsing: text) else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "--keep-within takes a duration such as 1y2m3d4h, not “\(text)”",
                    "--keep-within 需要形如 1y2m3d4h 的时长，而不是“\(text)”")(language))
            }
            policy.keepWithin = duration
        }
        let limit = try arguments.options["max-size"].map { (text) throws(CofferError) in try SearchFilters.parseSize(text) }
        let dryRun = arguments.flags.contains("dry-run")
        // No rule given: the store's own (every version for a day, hourly for a week…).
        let report = try await perform(PruneVersions(policy: policy.isEmpty ? nil : policy, sizeLimit: limit,
                                                     below: below, dryRun: dryRun))
        if arguments.flags.contains("json") {
            var files: [[String: Any]] = []
            for decision in report.decisions {
                let path = decision.version.path.description
                if files.last?["path"] as? String != path { files.append(["path": path, "keep": [Any](), "remove": [Any]()]) }
                var entry = Self.json(decision.version)
                entry["reasons"] = decision.reasons
                files[files.count - 1][decision.keep ? "keep" : "remove", default: [Any]()] =
                    (files[files.count - 1][decision.keep ? "keep" : "remove"] as? [Any] ?? []) + [entry]
            }
            return try printJSON(["dryRun": dryRun, "sizeLimit": report.sizeLimit, "files": files,
                                  "droppedBytes": report.droppedBytes])
        }
        let dropped = report.decisions.filter { !$0.keep }
        for decision in dropped {
            output.line("\(dryRun ? LocalizedText("would drop", "将删除")(language) : LocalizedText("dropped", "已删除")(language)) "
                        + "\(decision.version.path.description) \(decision.version.id) "
                        + "(\(Formatting.dateWithSeconds(decision.version.date)), \(Formatting.size(decision.version.size)))"
                        + (decision.reasons.isEmpty ? "" : ": " + decision.reasons.joined(separator: ", ")))
        }
        let kept = report.decisions.count - dropped.count
        output.line(LocalizedText(
            "\(kept) kept, \(dropped.count) \(dryRun ? "to drop" : "dropped") (\(Formatting.size(report.droppedBytes))).",
            "保留 \(kept) 个，\(dryRun ? "将删除" : "已删除") \(dropped.count) 个（\(Formatting.size(report.droppedBytes))）。")(language))
    }

    /// `restore --version ID [--as NAME] PATH`.
    func restoreVersion(_ arguments: ParsedArguments) async throws {
        guard let id = try versionOption(arguments), arguments.operands.count == 1 else { throw usage("restore") }
        let node = try await perform(RestoreVersion(id, of: try resolve(arguments.operands[0]), as: arguments.options["as"]))
        output.line(node.path.description)
    }

    /// The version number `--version` gives, if any.
    func versionOption(_ arguments: ParsedArguments) throws(CofferError) -> Int? {
        guard let text = arguments.options["version"] else { return nil }
        guard let id = Int(text.hasPrefix("v") ? String(text.dropFirst()) : text) else {
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "--version takes a version's number (as “versions” lists it), not “\(text)”",
                "--version 需要版本号（见 versions 的列表），而不是“\(text)”")(language))
        }
        return id
    }

    static func json(_ version: SavedVersion) -> [String: Any] {
        var entry: [String: Any] = ["id": version.id, "path": version.path.description, "date": Timestamp.iso8601(version.date),
                                    "size": version.size, "type": version.typeIdentifier,
                                    "keptAt": Timestamp.iso8601(version.keptAt)]
        if let session = version.session { entry["session"] = session }
        if let frontEnd = version.frontEnd { entry["frontEnd"] = frontEnd }
        return entry
    }

    func printJSON(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        output.line(String(decoding: data, as: UTF8.self))
    }
}
