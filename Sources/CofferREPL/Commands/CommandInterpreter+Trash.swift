import CofferCore
import FileService
import Foundation

extension CommandInterpreter {
    /// `rm`: to the trash, all in one pass; a failure is reported and the rest go on.
    func remove(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "rm")
        guard !arguments.operands.isEmpty else { throw usage("rm") }
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
        guard arguments.operands.isEmpty else { throw usage("empty-trash") }
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
        let count = try await perform(ListTrash()).items.filter { $0.isEmptied(olderThan: cutoff) }.count
        guard count > 0 else {
            output.line(LocalizedText("Nothing to delete.", "没有需要删除的项目。")(language))
            return
        }
        if let confirm {
            let question = LocalizedText(
                "Delete \(count) \(count == 1 ? "item" : "items") in the trash for good? This cannot be undone. [y/N] ",
                "永久删除废纸篓中的 \(count) 个项目？此操作无法撤销。[y/N] ")(language)
            guard await confirm(question) else { throw CofferError(.cancelled, path: .root(of: "trash")) }
        }
        let removed = try await perform(emptying)
        output.line(LocalizedText("Deleted \(removed) \(removed == 1 ? "item" : "items").", "已删除 \(removed) 个项目。")(language))
    }
}
