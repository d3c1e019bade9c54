import CofferCore
public import CofferRuntime
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The REPL for a person at a terminal: a prompt with the current folder, line editing,
/// history, Tab completion, Ctrl-C, progress bars, colours and conflict questions.
///
/// The session only wires these to a ``CommandInterpreter``; every file operation is the
/// interpreter's (and so the service's).
@MainActor
public final class InteractiveSession {
    public let interpreter: CommandInterpreter
    private let editor: any LineEditor
    private let historyFile: HistoryFile?
    private var history: History
    private let completionSource: (any CompletionSource)?
    private let interrupts: SignalMonitor
    /// SIGTERM and SIGHUP, with the exit status each gives.
    private let terminations: [(SignalMonitor, Int32)]
    private let running = RunningCommand()

    /// - Parameters:
    ///   - editor: reads lines (``ReadlineEditor`` on a terminal).
    ///   - historyFile: where history is loaded from and appended to, if anywhere.
    ///   - completionSource: names for Tab completion; none without it.
    ///   - interrupts: where Ctrl-C comes from.
    ///
    /// SIGTERM and SIGHUP end the session: a running command is cancelled first (nothing
    /// half-done is left), the terminal is restored, and ``run()`` returns 143 or 129.
    public init(interpreter: CommandInterpreter, editor: any LineEditor, historyFile: HistoryFile?,
                completionSource: (any CompletionSource)?, interrupts: SignalMonitor = SignalMonitor()) {
        self.interpreter = interpreter
        self.editor = editor
        self.historyFile = historyFile
        self.completionSource = completionSource
        self.interrupts = interrupts
        self.terminations = [(SignalMonitor(signal: SIGTERM), 143), (SignalMonitor(signal: SIGHUP), 129)]
        self.history = historyFile?.load() ?? History()
        for line in history.entries { editor.addToHistory(line) }
    }

    /// Reads and runs commands until `quit`, `exit` or Ctrl-D. Returns the exit status: 0,
    /// or 143/129 after SIGTERM/SIGHUP.
    public func run() async -> Int32 {
        let session = interpreter.session
        session.conflictQuestion = { [editor, session] conflict in
            await Self.ask(about: conflict, editor: editor, language: session.language)
        }
        session.changedFileQuestion = { [editor, session, interpreter] refusal, choices in
            // What happened first, as any error is said; the question says what can be done.
            await interpreter.report(refusal, withHint: false)
            let choice = await Self.ask(changed: choices, editor: editor, language: session.language)
            await MainActor.run { interpreter.changedFileDiscarded = choice == nil }
            return choice
        }
        interpreter.confirm = { [editor] question in
            await Self.confirm(question, editor: editor)
        }
        interpreter.ask = { [editor] question in
            guard case .line(let answer) = await editor.readLine(prompt: question, completion: nil, interruptible: true)
            else { return nil }
            return answer
        }
        interrupts.onSignal { [editor, running] in
            // At a prompt or question the editor takes it; during a command it cancels it.
            if !editor.interrupt() { running.cancel() }
        }
        for (monitor, status) in terminations {
            monitor.onSignal { [editor, running] in
                running.cancel(recording: status)
                _ = editor.endInput()
            }
        }
        defer {
            session.conflictQuestion = nil
            session.changedFileQuestion = nil
            interpreter.confirm = nil
            interpreter.ask = nil
            interrupts.onSignal(nil)
            for (monitor, _) in terminations { monitor.onSignal(nil) }
        }

        while true {
            if let signal = running.signal { return signal }  // arrived between two lines
            let completer = completionSource.map { Completer(currentFolder: interpreter.currentFolder, source: $0) }
            let input = await editor.readLine(prompt: prompt(), completion: completer.map { completer in
                { @Sendable prefix in completer.complete(prefix) }
            }, interruptible: false)
            if let signal = running.signal { return signal }
            switch input {
            case .endOfInput:
                interpreter.output.line()
                interpreter.output.flush()
                return 0
            case .interrupted:
                continue
            case .line(let line):
                remember(line)
                let outcome = await running.run(line, on: interpreter)
                if let signal = running.signal { return signal }
                if outcome == .quit { return 0 }
            }
        }
    }

    /// `files:/Download> `, the location in bold when colours are on. readline needs the
    /// invisible escape codes between \u{01} and \u{02} to know the prompt's width.
    func prompt() -> String {
        let location = interpreter.currentFolder.description
        guard interpreter.outputStyle.isEnabled else { return location + "> " }
        return "\u{01}\u{1B}[1m\u{02}\(location)\u{01}\u{1B}[0m\u{02}> "
    }

    private func remember(_ line: String) {
        guard history.add(line), let entry = history.entries.last else { return }
        editor.addToHistory(entry)
        historyFile?.append(entry)
    }

    /// Asks what to do about a name that is taken, saying what is there. An empty answer,
    /// Ctrl-C or Ctrl-D cancel. Told what is there, “replace” may put a file in a folder's
    /// place and the other way round (``ConflictPolicy/replaceFolder``).
    static func ask(about conflict: NameConflict, editor: any LineEditor, language: Language) async -> ConflictPolicy? {
        let question = LocalizedText(
            "\(conflict.sentence(in: .english)) Replace it (\(conflict.whatReplacingKeeps(in: .english))), keep both, or cancel? [r/k/C] ",
            "\(conflict.sentence(in: .simplifiedChinese)) 替换（\(conflict.whatReplacingKeeps(in: .simplifiedChinese))）、保留两者，还是取消？[r/k/C] ")(language)
        while true {
            guard case .line(let answer) = await editor.readLine(prompt: question, completion: nil, interruptible: true)
            else { return nil }
            if let choice = ConflictAnswer(answer) { return choice.policy == .replace ? .replaceFolder : choice.policy }
        }
    }
}

extension InteractiveSession {
    /// The session's changed-file question at the prompt: `choices` with their letters
    /// (keeping the copy in `files:/Recovered` is the default, and what no answer gives), and
    /// *discard* — cancelling the save — only once confirmed.
    static func ask(changed choices: [ChangedFileChoice], editor: any LineEditor, language: Language) async -> ChangedFileChoice? {
        let words: [ChangedFileChoice: (letter: String, text: LocalizedText)] = [
            .overwrite: ("o", LocalizedText("overwrite it (what is there now is kept as a version)", "覆盖它（现有内容保留为历史版本）")),
            .keepBoth: ("b", LocalizedText("keep both", "保留两者")),
            .keepInRecovered: ("K", LocalizedText("keep your copy in files:/Recovered", "把你的副本保存到 files:/Recovered")),
        ]
        let offered = choices.compactMap { words[$0] }
        let listed = offered.map { $0.text(language) }.joined(separator: language == .english ? ", " : "、")
        let question = LocalizedText("\(listed.prefix(1).uppercased() + listed.dropFirst()), or discard your changes? ",
                                     "\(listed)，还是放弃更改？")(language)
            + "[" + (offered.map(\.letter) + ["d"]).joined(separator: "/") + "] "
        let fallback: ChangedFileChoice? = choices.contains(.keepInRecovered) ? .keepInRecovered : nil
        while true {
            guard case .line(let line) = await editor.readLine(prompt: question, completion: nil, interruptible: true)
            else { return fallback }
            let answer: ChangedFileChoice?
            switch line.trimmingCharacters(in: .whitespaces).lowercased() {
            case "o", "overwrite", "覆盖": answer = .overwrite
            case "b", "both", "keep both", "保留两者": answer = .keepBoth
            case "", "k", "keep", "保存": answer = fallback
            case "d", "discard", "放弃":
                let sure = LocalizedText("Discard your changes for good? [y/N] ", "确定放弃更改吗？[y/N] ")(language)
                if await confirm(sure, editor: editor) { return nil }
                continue
            default: continue
            }
            if let answer, choices.contains(answer) { return answer }
        }
    }

    /// A yes/no question whose default is no: only `y`, `yes` or `是` go ahead.
    static func confirm(_ question: String, editor: any LineEditor) async -> Bool {
        guard case .line(let answer) = await editor.readLine(prompt: question, completion: nil, interruptible: true)
        else { return false }
        return ["y", "yes", "是"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}

/// An answer to the conflict question, in either language.
struct ConflictAnswer: Equatable {
    var policy: ConflictPolicy?

    /// `nil` when the answer means nothing (ask again).
    init?(_ text: String) {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "r", "replace", "替换": policy = .replace
        case "k", "b", "keep", "keep both", "both", "保留", "保留两者": policy = .keepBoth
        case "", "c", "n", "cancel", "no", "取消": policy = nil
        default: return nil
        }
    }
}
