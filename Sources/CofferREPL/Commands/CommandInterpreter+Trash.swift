import CofferCore
import CofferRuntime
import FileService
import Foundation

extension CommandInterpreter {
    /// `rm`: to the trash, all in one pass; a failure is reported and the rest go on.
    func remove(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "rm")
        guard !arguments.operands.isEmpty else { throw usage("rm") }
        // Items of the trash go for good, asked first: only the trash's own can be deleted.
        let trashed = arguments.operands.filter { (try? resolve($0))?.mount == "trash" }
        if !trashed.isEmpty {
            guard trashed.count == arguments.operands.count else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "rm deletes items of the trash for good: give them alone", "rm 会永久删除废纸篓中的项目：请单独指定它们")(language))
            }
            return try await deleteFromTrash(try trashed.map { (text) throws(CofferError) in try resolve(text).components.joined(separator: "/") },
                                             answered: arguments.saysYes)
        }
        let results = try await perform(TrashItems(try arguments.operands.map { (text) throws(CofferError) in try resolve(text) }))
        let failures = results.compactMap { result -> CofferError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        guard let first = failures.first else { return }
        if results.count == 1 { throw first }
        for failure in failures { report(failure) }
        throw Reported()
    }

    /// `trash`: name, original place, deletion time and size, oldest first. Entries that
    /// break the specification are reported on standard error; they never fail the command.
    func listTrash(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "trash")
        guard arguments.operands.isEmpty else { throw usage("trash") }
        let listing = try await perform(ListTrash())
        for problem in listing.problems { errors.line("\(programName): \(problem.message(in: language))") }
        guard !listing.items.isEmpty else {
            output.line(LocalizedText("The trash is empty.", "废纸篓是空的。")(language))
            return
        }
        let rows = listing.items.map { item -> [String] in
            [item.id, item.isForeign ? (item.originalHostPath ?? item.originalPath.description) : item.originalPath.description,
             item.deletionDate.map(Formatting.date) ?? "-", item.size.map(Formatting.size) ?? "-"]
        }
        var widths = [0, 0, 0, 0]
        for row in rows { for (column, text) in row.enumerated() { widths[column] = max(widths[column], Formatting.width(text)) } }
        widths[0] = min(widths[0], 40)
        widths[1] = min(widths[1], 60)
        for row in rows {
            output.line("\(Formatting.padded(row[0], to: widths[0]))  \(Formatting.padded(row[1], to: widths[1]))  "
                        + "\(Formatting.padded(row[2], to: widths[2]))  \(Formatting.leftPadded(row[3], to: widths[3]))")
        }
    }

    /// `restore`: each name back to where it was; prints where it went.
    func restore(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "restore")
        if arguments.options["version"] != nil { return try await restoreVersion(arguments) }
        if arguments.options["as"] != nil {
            throw CofferError(.invalidArgument, detail: LocalizedText("--as goes with --version", "--as 需与 --version 一起使用")(language))
        }
        let conflict = try arguments.conflictChoice(language: language)
        guard !arguments.operands.isEmpty else { throw usage("restore") }
        try await forEach(arguments.operands) { name throws(CofferError) in
            let restored = try await perform(RestoreItem(.name(name), conflict: conflict))
            output.line(restored.path.description)
        }
    }

    /// `empty-trash [--older-than DAYS]`: asks first when someone is there to answer.
    func emptyTrash(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "empty-trash")
        if !arguments.operands.isEmpty {
            guard arguments.options["older-than"] == nil else { throw usage("empty-trash") }
            return try await deleteFromTrash(arguments.operands, answered: arguments.saysYes)
        }
        var days: Double?
        if let text = arguments.options["older-than"] {
            guard let number = Double(text) else { throw usage("empty-trash") }
            days = number
        }
        let emptying: EmptyTrash
        do throws(CofferError) {
            emptying = try EmptyTrash(olderThanDays: days)
        } catch {
            throw usage("empty-trash")
        }
        let cutoff = emptying.cutoff
        let going = try await perform(ListTrash()).items.filter { $0.isEmptied(olderThan: cutoff) }
        guard !going.isEmpty else {
            output.line(LocalizedText("Nothing to delete.", "没有需要删除的项目。")(language))
            return
        }
        try checkAnswerable(answered: arguments.saysYes)
        if let confirm, !arguments.saysYes {
            // Told how much goes: items and bytes.
            let count = going.count, bytes = Formatting.size(going.reduce(0) { $0 + ($1.size ?? 0) })
            let question = LocalizedText(
                "Delete \(count) \(count == 1 ? "item" : "items") (\(bytes)) in the trash for good? This cannot be undone. [y/N] ",
                "永久删除废纸篓中的 \(count) 个项目（\(bytes)）？此操作无法撤销。[y/N] ")(language)
            guard await confirm(question) else { throw CofferError(.cancelled, path: .root(of: "trash")) }
        }
        let removed = try await perform(emptying, progress: LocalizedText("Emptying the trash", "正在清空废纸篓"))
        output.line(LocalizedText("Deleted \(removed) \(removed == 1 ? "item" : "items").", "已删除 \(removed) 个项目。")(language))
    }

    /// `empty-trash NAME…` and `rm trash:/NAME`: these items, for good, asked first on a
    /// terminal; without one, only when `answered` (`--yes`) says so.
    func deleteFromTrash(_ names: [String], answered: Bool) async throws(CofferError) {
        let items = try await perform(ListTrash()).items
        var chosen: [TrashItem] = []
        for name in names {
            let id = name.hasPrefix("trash:/") ? String(name.dropFirst("trash:/".count)) : name
            guard let item = items.first(where: { $0.id == id }) else {
                throw CofferError(.noSuchFile, path: FileService.shownTrashPath(of: id))
            }
            chosen.append(item)
        }
        try checkAnswerable(answered: answered)
        if let confirm, !answered {
            let what = chosen.count == 1
                ? "“\(chosen[0].id)” (\(chosen[0].size.map(Formatting.size) ?? "?"))"
                : LocalizedText("\(chosen.count) items (\(Formatting.size(chosen.reduce(0) { $0 + ($1.size ?? 0) })))",
                                "\(chosen.count) 个项目（\(Formatting.size(chosen.reduce(0) { $0 + ($1.size ?? 0) }))）")(language)
            let question = LocalizedText("Delete \(what) from the trash for good? This cannot be undone. [y/N] ",
                                         "从废纸篓中永久删除 \(what)？此操作无法撤销。[y/N] ")(language)
            guard await confirm(question) else { throw CofferError(.cancelled, path: .root(of: "trash")) }
        }
        let removed = try await perform(EmptyTrash(items: chosen.map(\.id)))
        output.line(LocalizedText("Deleted \(removed) \(removed == 1 ? "item" : "items").", "已删除 \(removed) 个项目。")(language))
    }

    /// Deleting for good is asked first; where no one can be asked (`-c`, a pipe), only
    /// `--yes` (or `-f`) says it: a script must not delete for good by accident (`rm trash:/*`).
    private func checkAnswerable(answered: Bool) throws(CofferError) {
        guard confirm == nil, !answered else { return }
        throw CofferError(.invalidArgument, detail: LocalizedText(
            "nothing was deleted: deleting for good without a terminal to ask needs --yes (or -f)",
            "未删除任何内容：没有终端可以询问时，永久删除需要 --yes（或 -f）")(language))
    }
}

extension ParsedArguments {
    /// `--yes` or `-f`: the question before deleting for good answered in advance.
    var saysYes: Bool { flags.contains("yes") || flags.contains("f") }
}
