import CofferCore
import CofferRuntime
import FileService
import Foundation

/// The host bridge at the prompt: `import`, `export`, `open`, `bookmarks`, and reading
/// text with `cat` and `head`.
extension CommandInterpreter {
    /// `import host-path… [--into dir] [--types uti,…]`: one line per item, its failures on
    /// standard error, and a failed status if any item failed.
    func importItems(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "import")
        let chosen = try arguments.chosenConflictPolicy(language: language)
        guard !arguments.operands.isEmpty else { throw usage("import") }
        let types = (arguments.options["types"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let results = try await perform(ImportItems(arguments.operands.map(Self.expandingHome),
                                                    into: try arguments.options["into"].map { (text) throws(CofferError) in try resolve(text) },
                                                    allowedTypes: types, conflict: chosen),
                                        progress: LocalizedText("Importing", "正在导入"))
        var failed = false
        for result in results {
            switch result.outcome {
            case .success(let node):
                // A name already taken is kept, and the item arrives beside it: say so.
                let asked = URL(fileURLWithPath: result.hostPath).lastPathComponent
                let beside = node.name == asked ? "" : LocalizedText(
                    " (“\(asked)” was already there and was kept)", "（“\(asked)”已存在，予以保留）")(language)
                output.line("\(result.hostPath) → \(node.path)\(beside)")
            case .failure(let error):
                report(error, about: result.hostPath)
                failed = true
            }
            for skip in result.skipped {
                report(skip.error, about: skip.hostPath)
                // Leaving out what the type filter asked to leave out is not a failure.
                if skip.error.kind != .typeNotAllowed { failed = true }
            }
        }
        if failed { throw Reported() }
    }

    /// `export path host-folder`: a copy, never a move; prints where it was written.
    func exportItem(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "export")
        let chosen = try arguments.chosenConflictPolicy(language: language)
        guard arguments.operands.count == 2 else { throw usage("export") }
        let source: VirtualPath
        do throws(CofferError) {
            source = try resolve(arguments.operands[0])
        } catch {
            session.recordUnmade(ExportItem.self, because: error)
            throw error
        }
        let folder = Self.expandingHome(arguments.operands[1])
        let outcome: Result<String, CofferError>
        do throws(CofferError) {
            outcome = .success(try await perform(ExportItem(source, toHostFolder: folder, conflict: chosen,
                                                            encoding: try exportEncoding(arguments)),
                                                 progress: LocalizedText("Exporting", "正在导出")))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let written):
            output.line(written)
        case .failure(let error) where error.path == nil:
            // About the host folder, which only the user's own words name.
            report(error, about: folder)
            throw Reported()
        case .failure(let error):
            throw error
        }
    }

    /// `--encoding`'s form, or `nil` without it.
    private func exportEncoding(_ arguments: ParsedArguments) throws(CofferError) -> TextForm? {
        guard let name = arguments.options["encoding"] else { return nil }
        guard let form = TextForm(name: name) else {
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "--encoding is utf-8, utf-8-bom, utf-16, utf-16le, utf-16be or gb18030, not “\(name)”",
                "--encoding 可以是 utf-8、utf-8-bom、utf-16、utf-16le、utf-16be 或 gb18030，而不是“\(name)”")(language))
        }
        return form
    }

    /// `open host-path…`: opens host files in place and remembers each as a bookmark.
    func openInPlace(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "open")
        guard !arguments.operands.isEmpty else { throw usage("open") }
        var failed = false
        for hostPath in arguments.operands.map(Self.expandingHome) {
            do throws(CofferError) {
                let opened = try await perform(OpenHostFile(hostPath))
                let bookmark = opened.bookmark
                output.line(LocalizedText(
                    "Opened “\(bookmark.name)” in place as bookmark \(bookmark.id): \(describe(opened.type)), \(Formatting.size(bookmark.size)).",
                    "已原位打开“\(bookmark.name)”，书签 \(bookmark.id)：\(describe(opened.type))，\(Formatting.size(bookmark.size))。")(language))
                output.line(LocalizedText(
                    "Read it with “cat --bookmark \(bookmark.id)”, change it with “edit --bookmark \(bookmark.id)”; “bookmarks” lists every bookmark.",
                    "用“cat --bookmark \(bookmark.id)”读取，用“edit --bookmark \(bookmark.id)”修改；“bookmarks”列出所有书签。")(language))
            } catch {
                report(error, about: hostPath)
                failed = true
            }
        }
        if failed { throw Reported() }
    }

    /// `bookmarks [--remove ID]`: each bookmark, whether it still finds its file, and where.
    func listBookmarks(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "bookmarks")
        guard arguments.operands.isEmpty else { throw usage("bookmarks") }
        if let text = arguments.options["remove"] {
            try await perform(RemoveBookmark(try bookmarkID(text)))
            return
        }
        let statuses = try await perform(ListBookmarks())
        guard !statuses.isEmpty else {
            output.line(LocalizedText("No bookmarks yet; “open” makes one.", "还没有书签；用“open”创建。")(language))
            return
        }
        let rows = statuses.map { status -> [String] in
            let state: String = switch status.state {
            case .ok: LocalizedText("ok", "可用")(language)
            case .stale: LocalizedText("stale", "已失效")(language)
            case .unreachable: status.problem?.userMessage(in: language, hints: .repl).text ?? ""
            }
            return ["\(status.bookmark.id)", state, status.bookmark.hostPath]
        }
        let idWidth = rows.map { Formatting.width($0[0]) }.max() ?? 0
        let stateWidth = rows.map { Formatting.width($0[1]) }.max() ?? 0
        for row in rows {
            output.line("\(Formatting.leftPadded(row[0], to: idWidth))  \(Formatting.padded(row[1], to: stateWidth))  \(row[2])")
        }
    }

    /// `cat [--bookmark ID] [path…]`: whole files as text.
    func cat(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "cat")
        try await printText(arguments, command: "cat", lines: nil)
    }

    /// `head [-n N] [--bookmark ID] [path…]`: the first lines (10 unless told).
    func head(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "head")
        var lines = 10
        if let text = arguments.options["n"] {
            guard let count = Int(text), count >= 0 else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "-n needs a whole number, not “\(text)”", "-n 需要一个非负整数，而不是“\(text)”")(language))
            }
            lines = count
        }
        try await printText(arguments, command: "head", lines: lines)
    }

    private func printText(_ arguments: ParsedArguments, command: String, lines: Int?) async throws {
        if let text = arguments.options["bookmark"] {
            guard arguments.operands.isEmpty else { throw usage(command) }
            let id = try bookmarkID(text)
            let output = self.output
            let (charset, printed) = try await session.withText(ofBookmark: id) { reader in
                let printed = try await Self.copyText(from: reader, lines: lines, to: output)
                return (reader.charset, printed)
            }
            noteCharset(charset, printed: printed)
            return
        }
        guard !arguments.operands.isEmpty else { throw usage(command) }
        if let version = try versionOption(arguments) {
            guard arguments.operands.count == 1 else { throw usage(command) }
            let output = self.output
            let (charset, printed) = try await session.withText(ofVersion: version, of: try resolve(arguments.operands[0])) { reader in
                (reader.charset, try await Self.copyText(from: reader, lines: lines, to: output))
            }
            return noteCharset(charset, printed: printed)
        }
        try await forEach(arguments.operands) { text throws(CofferError) in
            let output = self.output
            let (charset, printed) = try await session.withText(of: try resolve(text)) { reader in
                (reader.charset, try await Self.copyText(from: reader, lines: lines, to: output))
            }
            noteCharset(charset, printed: printed)
        }
    }

    /// Writes text to `output` until the end, or until `lines` lines. Returns what was
    /// written, so a missing final newline can be added.
    private static func copyText(from reader: TextReader, lines: Int?, to output: TextOutput) async throws -> String {
        var remaining = lines ?? .max
        var last = ""
        while remaining > 0, let piece = try await reader.next() {
            var text = Substring(piece)
            if lines != nil {
                var end = text.startIndex
                while end < text.endIndex && remaining > 0 {
                    if text[end] == "\n" || text[end] == "\r\n" { remaining -= 1 }
                    end = text.index(after: end)
                }
                text = text[..<end]
            }
            output.write(String(text))
            if !text.isEmpty { last = String(text.suffix(1)) }
        }
        if !last.isEmpty && last != "\n" && last != "\r\n" { output.line() }
        return last
    }

    /// Text that was not UTF-8 is said so on standard error, where it does not mix with the text.
    private func noteCharset(_ charset: TextCharset, printed: String) {
        guard charset != .utf8 else { return }
        output.flush()
        errors.line(LocalizedText("(read as \(charset.name))", "（按 \(charset.name) 编码读取）")(language))
    }

    func bookmarkID(_ text: String) throws(CofferError) -> Int {
        guard let id = Int(text), id > 0 else {
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "a bookmark is a number, not “\(text)”", "书签编号应为数字，而不是“\(text)”")(language))
        }
        return id
    }

    /// “Plain text (public.plain-text)”, with the content's type when it differs.
    func describe(_ type: TypeAssessment) -> String {
        let name = typeName(type.byName)
        guard let content = type.byContent, type.isMismatch else { return name }
        return LocalizedText("\(name), but the content is \(typeName(content))",
                             "\(name)，但内容是\(typeName(content))")(language)
    }

    func typeName(_ identifier: String) -> String {
        let name = service.registry.type(withIdentifier: identifier)?.name(in: language) ?? identifier
        return "\(name) (\(identifier))"
    }

    /// `~` and `~/…` at the start of a host path mean the home folder, as in a shell.
    static func expandingHome(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + path.dropFirst()
    }
}
