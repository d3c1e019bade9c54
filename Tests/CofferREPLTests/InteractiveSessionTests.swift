import CofferCore
@testable import CofferREPL
import CofferTestSupport
import Dispatch
import FileService
import Synchronization
import Testing

/// A line editor that replays answers and records prompts, standing in for readline.
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
        interpreter = CommandInterpreter(service: try FileService.standard(container: container), language: .english,
                                         output: output, errors: errors)
        historyFile = HistoryFile(path: container.appDataPath + "/history")
    }

    func session(_ editor: ScriptedEditor) -> InteractiveSession {
        InteractiveSession(interpreter: interpreter, editor: editor, historyFile: historyFile,
                           completionSource: ServiceCompletionSource(service: interpreter.service),
                           interrupts: InterruptMonitor())
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
        #expect(editor.prompts[1] == "“a.txt” already exists in files:/Download. Replace it, keep both, or cancel? [r/k/C] ")
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
