import CofferCore
@testable import CofferREPL
import CofferRuntime
import CofferTestSupport
import Dispatch
import FileService
import Foundation
import Synchronization
import Testing

/// A line editor that replays answers and records prompts, standing in for readline.
/// How long completion may wait for the service in these tests. At the prompt it gives up
/// after 2 s (an answer later than that is no use to a typist); tests share two cores with
/// every other suite and a Ceph cluster, and check what completion offers, not how fast.
private let completionPatience: Duration = .seconds(30)

final class ScriptedEditor: LineEditor {
    private struct State {
        var inputs: [LineInput]
        var prompts: [String] = []
        var history: [String] = []
        var completions: [Completion] = []
    }
    private let state: Mutex<State>

    init(_ inputs: [LineInput]) { state = Mutex(State(inputs: inputs)) }

    func readLine(prompt: String, completion: (@Sendable (String) -> Completion)?, interruptible: Bool) async -> LineInput {
        // As readline does, complete on a serial queue of its own: outside Swift's pool, and
        // not on a global queue whose few threads the service's blocking I/O needs.
        let done = await withCheckedContinuation { continuation in
            DispatchQueue(label: "completion").async { continuation.resume(returning: completion?("cd Dow")) }
        }
        return state.withLock { state in
            state.prompts.append(prompt)
            if let done { state.completions.append(done) }
            return state.inputs.isEmpty ? .endOfInput : state.inputs.removeFirst()
        }
    }

    func addToHistory(_ line: String) { state.withLock { $0.history.append(line) } }
    func interrupt() -> Bool { false }
    func endInput() -> Bool { false }

    var prompts: [String] { state.withLock { $0.prompts } }
    var history: [String] { state.withLock { $0.history } }
    var completions: [Completion] { state.withLock { $0.completions } }
}

@MainActor
struct InteractiveSessionTests {
    let directory = TemporaryDirectory("session")
    let output = TextOutput()
    let errors = TextOutput()
    let interpreter: CommandInterpreter
    let historyFile: HistoryFile

    init() async throws {
        let container = try await Container.open(at: directory.path)
        interpreter = CommandInterpreter(session: try FileService.standard(container: container)
                                             .openSession(SessionOptions(frontEnd: "repl", language: .english)),
                                         output: output, errors: errors)
        historyFile = HistoryFile(path: container.appDataPath + "/history")
    }

    func session(_ editor: ScriptedEditor) -> InteractiveSession {
        InteractiveSession(interpreter: interpreter, editor: editor, historyFile: historyFile,
                           completionSource: ServiceCompletionSource(session: interpreter.session, timeout: completionPatience),
                           interrupts: SignalMonitor())
    }

    @Test func promptsWithTheFolderAndKeepsHistory() async {
        historyFile.append("ls")
        let editor = ScriptedEditor([.line("cd Download"), .line("pwd"), .line("pwd"), .line("quit")])
        #expect(await session(editor).run() == 0)
        #expect(editor.prompts == ["files:/> ", "files:/Download> ", "files:/Download> ", "files:/Download> "])
        #expect(editor.history == ["ls", "cd Download", "pwd", "quit"])
        #expect(directory.contents("Library/Application Support/AppData/history") == "ls\ncd Download\npwd\nquit\n")
        #expect(output.text == "files:/Download\nfiles:/Download\n")
    }

    @Test func completionAsksTheServiceFromTheCurrentFolder() async {
        let editor = ScriptedEditor([.endOfInput])
        #expect(await session(editor).run() == 0)
        #expect(editor.completions.first?.replacement == "Download/")
    }

    @Test func aConflictIsAskedAndTheAnswerApplied() async {
        directory.make(["Documents/UserFiles/a.txt": "new", "Documents/UserFiles/Download/a.txt": "old"])
        let editor = ScriptedEditor([.line("cp a.txt Download"), .line("what?"), .line("k"),
                                     .line("mv a.txt Download"), .line("r"), .endOfInput])
        #expect(await session(editor).run() == 0)
        #expect(editor.prompts[1] == "“a.txt” (a file, 3 B) already exists in files:/Download. Replace it (it is kept as a version), keep both, or cancel? [r/k/C] ")
        #expect(editor.prompts[2] == editor.prompts[1])  // “what?” is asked again
        #expect(directory.contents("Documents/UserFiles/Download/a (2).txt") == "new")
        #expect(directory.contents("Documents/UserFiles/Download/a.txt") == "new")
        #expect(!directory.exists("Documents/UserFiles/a.txt"))
        #expect(errors.text.isEmpty)
        // Answers are not commands: they stay out of the history.
        #expect(editor.history == ["cp a.txt Download", "mv a.txt Download"])
    }

    @Test func cancellingOrInterruptingTheQuestionChangesNothing() async {
        directory.make(["Documents/UserFiles/a.txt": "new", "Documents/UserFiles/Download/a.txt": "old"])
        let editor = ScriptedEditor([.line("mv a.txt Download"), .line(""), .line("cp a.txt Download"), .interrupted,
                                     .line("rename a.txt x"), .endOfInput])
        #expect(await session(editor).run() == 0)
        #expect(directory.contents("Documents/UserFiles/Download/a.txt") == "old")
        #expect(directory.contents("Documents/UserFiles/x") == "new")
        #expect(errors.text.components(separatedBy: "was cancelled").count == 3)
    }

    @Test func answersInBothLanguages() {
        #expect(ConflictAnswer("R")?.policy == .replace)
        #expect(ConflictAnswer(" 替换 ")?.policy == .replace)
        #expect(ConflictAnswer("keep both")?.policy == .keepBoth)
        #expect(ConflictAnswer("保留两者")?.policy == .keepBoth)
        #expect(ConflictAnswer("")?.policy == .some(nil))
        #expect(ConflictAnswer("取消")?.policy == .some(nil))
        #expect(ConflictAnswer("maybe") == nil)
    }
}

@MainActor
struct TrashCommandTests {
    let directory = TemporaryDirectory("trash-repl")
    let output = TextOutput()
    let errors = TextOutput()
    let interpreter: CommandInterpreter

    init() async throws {
        let container = try await Container.open(at: directory.path)
        interpreter = CommandInterpreter(session: try FileService.standard(container: container)
                                             .openSession(SessionOptions(frontEnd: "repl", language: .english)),
                                         output: output, errors: errors)
    }

    @Test func rmTrashRestoreRoundTrip() async {
        directory.make(["Documents/UserFiles/Notes/a.txt": "a", "Documents/UserFiles/b c.txt": "b"])
        #expect(await interpreter.run(line: "rm Notes 'b c.txt'") == .success)
        #expect(output.text.isEmpty)
        #expect(!directory.exists("Documents/UserFiles/Notes"))
        #expect(await interpreter.run(line: "trash") == .success)
        let rows = output.text.split(separator: "\n")
        #expect(rows.count == 2)
        #expect(rows.contains { $0.hasPrefix("Notes    files:/Notes    ") && $0.hasSuffix("8.2 KB") })
        #expect(rows.contains { $0.hasPrefix("b c.txt  files:/b c.txt  ") && $0.hasSuffix("1 B") })
        #expect(await interpreter.run(line: "ls trash:; restore Notes 'b c.txt'; trash") == .success)
        #expect(output.text.hasSuffix("Notes\nb c.txt\nfiles:/Notes\nfiles:/b c.txt\nThe trash is empty.\n"))
        #expect(directory.contents("Documents/UserFiles/Notes/a.txt") == "a")
    }

    @Test func restoreByOriginalNameWhenUniqueAndAsksOnConflict() async {
        directory.make(["Documents/UserFiles/x/r.txt": "1", "Documents/UserFiles/y/r.txt": "2"])
        #expect(await interpreter.run(line: "rm x/r.txt y/r.txt") == .success)
        #expect(await interpreter.run(line: "restore nothing") == .failure)
        #expect(errors.text.contains("“trash:/nothing” doesn't exist"))
        // Both were named r.txt: the name in the trash decides.
        #expect(await interpreter.run(line: "restore 'r (2).txt'") == .success)
        #expect(directory.contents("Documents/UserFiles/y/r.txt") == "2")
        directory.make(["Documents/UserFiles/x/r.txt": "new"])
        let asked = Asked()
        interpreter.session.conflictQuestion = { conflict in
            asked.paths.withLock { $0.append(conflict.destination) }
            return .keepBoth
        }
        #expect(await interpreter.run(line: "restore r.txt") == .success)
        #expect(asked.paths.withLock { $0.map(\.description) } == ["files:/x/r.txt"])
        #expect(output.text.hasSuffix("files:/x/r (2).txt\n"))
        #expect(directory.contents("Documents/UserFiles/x/r (2).txt") == "1")
    }

    @Test func severalItemsWithTheSameOriginalNameNeedTheirTrashName() async {
        directory.make(["Documents/UserFiles/x/r.txt": "1", "Documents/UserFiles/y/r.txt": "2"])
        #expect(await interpreter.run(line: "rm x/r.txt y/r.txt; restore r.txt") == .success)
        // “r.txt” is the first one's name in the trash, so it is restored by that.
        #expect(directory.contents("Documents/UserFiles/x/r.txt") == "1")
        #expect(await interpreter.run(line: "rm x/r.txt") == .success)
        #expect(await interpreter.run(line: "restore 'r (3).txt'") == .failure)
    }

    @Test func emptyTrashAsksWhenItCanAndCountsWhatItDeleted() async {
        directory.make(["Documents/UserFiles/a.txt": "a", "Documents/UserFiles/b.txt": "b"])
        #expect(await interpreter.run(line: "rm a.txt b.txt") == .success)
        var questions: [String] = []
        interpreter.confirm = { question in questions.append(question); return false }
        #expect(await interpreter.run(line: "empty-trash") == .failure)
        #expect(questions == ["Delete 2 items (2 B) in the trash for good? This cannot be undone. [y/N] "])
        #expect(directory.names("Library/Trash/files").count == 2)
        #expect(await interpreter.run(line: "empty-trash --older-than 1") == .success)
        #expect(output.text == "Nothing to delete.\n")
        interpreter.confirm = { _ in true }
        #expect(await interpreter.run(line: "empty-trash") == .success)
        #expect(output.text.hasSuffix("Deleted 2 items.\n"))
        #expect(directory.names("Library/Trash/files").isEmpty)
        #expect(await interpreter.run(line: "empty-trash --older-than x") == .failure)
    }

    @Test func problemsAreReportedButTheListingSucceeds() async {
        directory.make(["Library/Trash/info/gone.txt.trashinfo": "[Trash Info]\nPath=/x/gone.txt\n",
                        "Library/Trash/files/stray.txt": "s"])
        #expect(await interpreter.run(line: "trash") == .success)
        #expect(errors.text.contains("information about “gone.txt” but not the item"))
        #expect(errors.text.contains("“stray.txt” has no information file"))
        #expect(output.text.hasPrefix("stray.txt  files:/stray.txt  -  "))
    }

    @Test func trashNamesComplete() async throws {
        directory.make(["Documents/UserFiles/report.pdf": "r"])
        #expect(await interpreter.run(line: "rm report.pdf") == .success)
        let completer = Completer(currentFolder: .root(),
                                  source: ServiceCompletionSource(session: interpreter.session, timeout: completionPatience))
        let completion = await withCheckedContinuation { continuation in
            DispatchQueue(label: "completion").async { continuation.resume(returning: completer.complete("restore rep")) }
        }
        #expect(completion.replacement == "report.pdf ")
    }
}
