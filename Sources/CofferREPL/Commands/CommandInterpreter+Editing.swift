import CofferCore
import CofferRuntime
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Changing what is in a file: `edit` (in an editor program) and `write` (from standard input).
extension CommandInterpreter {
    /// `edit [--bookmark ID] [path|host:path]`: the file in `$VISUAL`, else `$EDITOR`, else
    /// `vi`, on a private copy, saved back only if the file did not change meanwhile.
    func edit(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "edit")
        let target = try await editTarget(arguments, command: "edit")
        let draft = try await perform(BeginEdit(target))
        // Ctrl-C typed in the editor reaches this process too: the editor and the save that
        // follows run apart from the command's cancellation, so an edit is never dropped by it.
        try await Task { @MainActor in try await self.finish(draft) }.value
    }

    private func finish(_ draft: EditDraft) async throws {
        var choice = EditChoice.save
        var opensEditor = true
        // Kept in files:/Recovered because it could not be saved where asked: the command fails.
        var fellBack = false
        while true {
            if opensEditor {
                let (program, status) = try await runEditor(on: draft.draftPath)
                guard status == 0 else {
                    _ = try? await perform(FinishEdit(draft, choice: .discard))
                    errors.line(errorStyle.error(programName + ":") + LocalizedText(
                        " The editor (\(program)) exited with status \(status); nothing was saved.",
                        " 编辑器（\(program)）以状态 \(status) 退出；未保存任何内容。")(language))
                    throw Reported()
                }
                opensEditor = false
            }
            changedFileDiscarded = false
            do throws(CofferError) {
                describe(try await perform(FinishEdit(draft, choice: choice)))
                break
            } catch where error.kind == .changedSinceRead && changedFileDiscarded {
                // At a terminal the session asked (``InteractiveSession``), and the answer was to
                // discard the changes, once confirmed.
                choice = .discard
            } catch where error.kind == .changedSinceRead || (error.kind == .fileExists && choice == .keepBoth) {
                // In a script there is no one to ask: the edited copy is kept in files:/Recovered.
                report(error, withHint: false)
                choice = .keepInFiles
                fellBack = true
            } catch where error.kind == .notEncodable {
                report(error)
                let again = LocalizedText("Edit it again? [Y/n] ", "重新编辑吗？[Y/n] ")(language)
                if let answer = await ask?(again), !["n", "no", "否"].contains(answer.lowercased()) {
                    opensEditor = true
                } else {
                    choice = .keepInFiles
                    fellBack = true
                }
            } catch where choice != .keepInFiles && error.kind != .cancelled {
                report(error)
                choice = .keepInFiles
                fellBack = true
            } catch {
                errors.line(LocalizedText("Your edited text is still in \(draft.draftPath).",
                                          "编辑后的文本仍保存在 \(draft.draftPath)。")(language))
                throw error
            }
        }
        if fellBack { throw Reported() }
    }

    /// What a save did, said once.
    private func describe(_ outcome: EditOutcome) {
        switch outcome {
        case .unchanged:
            output.line(LocalizedText("No changes; nothing was saved.", "没有更改，未保存。")(language))
        case .discarded:
            output.line(LocalizedText("Your changes were discarded.", "已放弃所做的更改。")(language))
        case .saved(let location, let form):
            let encoding = form == .utf8 ? "" : " (\(form.name))"
            output.line(LocalizedText("Saved \(shown(location))\(encoding).", "已保存 \(shown(location))\(encoding)。")(language))
        }
    }

    /// Runs the user's editor on `path` with this terminal, and waits for it.
    /// - Returns: the program's name and its exit status (128 + N when killed by signal N).
    private func runEditor(on path: String) async throws(CofferError) -> (String, Int32) {
        let environment = ProcessInfo.processInfo.environment
        let program = [environment["VISUAL"], environment["EDITOR"]]
            .compactMap { $0?.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty } ?? "vi"
        output.flush()
        errors.flush()
        // Through the shell, as other programs run $EDITOR: it may carry arguments (`code --wait`).
        let status = try await BlockingIO.run { _ throws(CofferError) in
            try EditorProcess.run(["/bin/sh", "-c", program + " \"$1\"", "coffer-edit", path])
        }
        return (program, status)
    }

    /// `write [--append] [--if-version V] [--keep-both|--replace] [--bookmark ID] [path|host:path]`:
    /// standard input becomes the file's content (or is added at its end).
    func write(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "write")
        let chosen = try arguments.chosenConflictPolicy(language: language)
        let append = arguments.flags.contains("append")
        let version = try arguments.options["if-version"].map { (text) throws(CofferError) -> FileVersion in
            guard let version = FileVersion(token: text) else { throw usage("write") }
            return version
        }
        if append && chosen != nil || version != nil && chosen != nil {
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "--append and --if-version do not go with --keep-both or --replace",
                "--append 和 --if-version 不能与 --keep-both 或 --replace 同时使用")(language))
        }
        let target = try await editTarget(arguments, command: "write")
        let input = try await Self.readStandardInput(limit: FileService.editLimit * 4)
        if case .bookmark = target, append {
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "--append is for files in Coffer", "--append 只用于 Coffer 中的文件")(language))
        }
        // The file's own encoding is kept, and a host file's conflict is decided, by the session.
        let saved = try await perform(SaveText(target, text: input, conflict: chosen.map(ConflictChoice.policy),
                                               ifVersion: version, appending: append))
        if case .host(let result, _) = saved {
            output.line(LocalizedText("Saved \(shown(result.savedPath)).", "已保存 \(shown(result.savedPath))。")(language))
        }
    }

    /// What `edit` and `write` act on: `--bookmark ID`, a `host:` path (opened in place
    /// first, as `open` does), or a path in Coffer.
    private func editTarget(_ arguments: ParsedArguments, command: String) async throws(CofferError) -> EditTarget {
        if let text = arguments.options["bookmark"] {
            guard arguments.operands.isEmpty else { throw usage(command) }
            return .bookmark(try bookmarkID(text))
        }
        guard arguments.operands.count == 1, let operand = arguments.operands.first else { throw usage(command) }
        if operand.hasPrefix(Self.hostPrefix) {
            let hostPath = Self.expandingHome(String(operand.dropFirst(Self.hostPrefix.count)))
            return .bookmark(try await perform(OpenHostFile(hostPath)).bookmark.id)
        }
        return .file(try resolve(operand))
    }

    /// How `edit` and `write` name a file on this computer rather than in Coffer.
    static let hostPrefix = "host:"

    /// Standard input to its end (Ctrl-D at a terminal), at most `limit` bytes; a cancelled
    /// command (Ctrl-C) stops reading.
    static func readStandardInput(limit: Int) async throws(CofferError) -> [UInt8] {
        try await BlockingIO.run { cancellation throws(CofferError) in
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
                let polled = poll(&ready, 1, 100)
                try cancellation.check(nil)
                if polled == 0 || (polled < 0 && errno == EINTR) { continue }
                let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count >= 0 else { throw CofferError.lastSystemError("read", path: nil) }
                if count == 0 { return bytes }
                bytes += buffer[..<count]
                guard bytes.count <= limit else {
                    throw CofferError(.tooLarge, detail: "\(limit) bytes")
                }
            }
        }
    }
}

/// An editor program run in the foreground with this process's terminal.
enum EditorProcess {
    /// Runs `arguments` (the first is the program's path) with the standard descriptors and
    /// environment of this process, in its process group (the terminal's Ctrl-C reaches it),
    /// signals at their defaults and none blocked, and waits.
    /// - Returns: the exit status, or 128 + the signal that ended it.
    static func run(_ arguments: [String]) throws(CofferError) -> Int32 {
        try ChildProcess.start(arguments, standardInput: .inherited, standardOutput: .inherited,
                               standardError: .inherited).wait()
    }
}
