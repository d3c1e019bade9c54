import CofferTestSupport
import Foundation
import Testing

/// The REPL in a real terminal (tmux): prompt, completion, history, Ctrl-C, quitting,
/// colours, conflict questions and cancelling a long copy.
@Suite(.serialized, .ownsProcesses)
struct InteractiveEndToEndTests {
    let directory = TemporaryDirectory("tty")
    var container: String { directory.url("container") }
    var files: String { directory.url("container/Documents/UserFiles") }

    init() throws {
        // Create the container (and its Download and Import folders) before each test.
        let result = try CofferBinary.run(["--container", directory.url("container"), "-c", "pwd"])
        #expect(result.status == 0)
    }

    func start(_ extra: [String: String] = ["NO_COLOR": "1"]) throws -> TerminalSession {
        var environment = ["TERM": "screen", "LANG": "C.UTF-8", "HOME": directory.path]
        environment.merge(extra) { $1 }
        let session = try TerminalSession([CofferBinary.url.path, "--container", container, "--lang", "en"],
                                          environment: environment)
        try session.waitForLastLine("files:/>")
        return session
    }

    @Test func tabCompletesCommandsAndFolderNames() throws {
        directory.make(["container/Documents/UserFiles/Projects/plan.txt": "x"])
        let session = try start()
        try session.type("mkd")
        try session.press("Tab")
        try session.waitForLastLine("files:/> mkdir")
        try session.type("Notes")
        try session.press("Enter")
        try session.waitForLastLine("files:/>")
        #expect(directory.exists("container/Documents/UserFiles/Notes"))

        try session.type("cd Pro")
        try session.press("Tab")
        try session.waitForLastLine("files:/> cd Projects/")
        try session.press("Enter")
        try session.waitForLastLine("files:/Projects>")

        try session.type("info pl")
        try session.press("Tab")
        try session.waitForLastLine("files:/Projects> info plan.txt")
        try session.press("C-c")
        // Ctrl-C arrives as a signal, apart from the keys: wait for the fresh prompt before typing.
        try session.waitForLastLine("files:/Projects>")

        // Mount names complete too.
        try session.type("ls tras")
        try session.press("Tab")
        try session.waitForLastLine("files:/Projects> ls trash:/")
    }

    /// A file named with an escape sequence (an S3 key may hold any byte but `/`) cannot steer
    /// the terminal: on one, its control characters are shown as symbols; to a pipe the name
    /// stays exact, for scripts (issue 32).
    @Test func aNameWithAnEscapeSequenceIsShownNotObeyed() throws {
        let name = "evil\u{1B}]0;pwned\u{07}\u{1B}[31mred.txt"
        _ = FileManager.default.createFile(atPath: files + "/" + name, contents: Data("x".utf8))
        let session = try start()
        try session.type("ls; find red")
        try session.press("Enter")
        let screen = try session.wait { $0.contains("evil␛]0;pwned␇␛[31mred.txt") && $0.hasSuffix("files:/>") || $0.contains("files:/evil␛") }
        #expect(screen.contains("evil␛]0;pwned␇␛[31mred.txt"), "\(screen)")
        #expect(!session.screen(escapes: true).contains("pwned\u{07}"))
        let piped = try CofferBinary.run(["--container", container, "-c", "ls"])
        #expect(piped.output.contains(name))
    }

    @Test func namesWithSpacesAndChineseCompleteQuoted() throws {
        directory.make(["container/Documents/UserFiles/My Notes/a.txt": "x",
                        "container/Documents/UserFiles/报告 2026/b.txt": "y"])
        let session = try start()
        try session.type("cd My")
        try session.press("Tab")
        try session.waitForLastLine("files:/> cd 'My Notes/'")
        try session.press("Enter")
        try session.waitForLastLine("files:/My Notes>")

        try session.type("cd ../报")
        try session.press("Tab")
        try session.waitForLastLine("files:/My Notes> cd '../报告 2026/'")
        try session.press("Enter")
        try session.waitForLastLine("files:/报告 2026>")
    }

    @Test func secondTabListsTheMatches() throws {
        directory.make(["container/Documents/UserFiles/Report 1.txt": "1",
                        "container/Documents/UserFiles/Report 2.txt": "2"])
        let session = try start()
        try session.type("info Rep")
        try session.press("Tab")
        try session.waitForLastLine("files:/> info 'Report ")
        try session.press("Tab")
        // The matches are printed first and the line drawn again under them: wait for both.
        // (capture-pane drops trailing spaces.)
        let screen = try session.wait { $0.contains("Report 1.txt") && $0.hasSuffix("files:/> info 'Report") }
        #expect(screen.contains("Report 2.txt"))
    }

    @Test func historySurvivesARestartWithoutRepeats() throws {
        var session = try start()
        for line in ["mkdir Alpha", "pwd", "pwd"] {
            try session.type(line)
            try session.press("Enter")
        }
        try session.type("quit")
        try session.press("Enter")
        try session.waitForExit()
        #expect(directory.contents("container/Library/Application Support/AppData/history")
                == "mkdir Alpha\npwd\nquit\n")

        session = try start()
        try session.press("Up")
        try session.waitForLastLine("files:/> quit")
        try session.press("Up")
        try session.waitForLastLine("files:/> pwd")
        try session.press("Up")
        try session.waitForLastLine("files:/> mkdir Alpha")
    }

    @Test func ctrlCAtThePromptClearsTheLineAndQuitLeaves() throws {
        let session = try start()
        try session.type("mkdir Nope")
        // Ctrl-C only once the line is on screen: sent earlier, it can overtake the typing.
        try session.waitForLastLine("files:/> mkdir Nope")
        try session.press("C-c")
        let screen = try session.wait { $0.contains("files:/> mkdir Nope^C") && $0.hasSuffix("files:/>") }
        #expect(screen.contains("files:/> mkdir Nope^C"))
        try session.press("Enter")
        usleep(200_000)
        #expect(session.isRunning)
        #expect(!directory.exists("container/Documents/UserFiles/Nope"))

        try session.type("quit")
        try session.press("Enter")
        try session.waitForExit()
        #expect(session.exitStatus == 0)
    }

    @Test func ctrlDLeaves() throws {
        let session = try start()
        try session.press("C-d")
        try session.waitForExit()
        #expect(session.exitStatus == 0)
    }

    @Test func sigtermAtThePromptEndsCleanly() throws {
        let session = try start()
        try session.type("mkdir Half")
        kill(try #require(session.processID), SIGTERM)
        try session.waitForExit()
        #expect(session.exitStatus == 143)
        #expect(!directory.exists("container/Documents/UserFiles/Half"))
    }

    @Test func aConflictAsksReplaceKeepBothOrCancel() throws {
        directory.make(["container/Documents/UserFiles/a.txt": "new",
                        "container/Documents/UserFiles/Download/a.txt": "old"])
        let session = try start()
        try session.type("cp a.txt Download")
        try session.press("Enter")
        // The question says what is there and where a replace puts it (it wraps on the screen).
        try session.wait { $0.filter { !$0.isWhitespace }.hasSuffix("[r/k/C]") }
        let asked = session.screen().filter { !$0.isWhitespace }
        let question = "“a.txt” (a file, 3 B) already exists in files:/Download. Replace it (it is kept as a version), keep both, or cancel? [r/k/C]"
        #expect(asked.contains(question.filter { !$0.isWhitespace }), "\(asked)")
        try session.type("k")
        try session.press("Enter")
        try session.waitForLastLine("files:/>")
        #expect(directory.contents("container/Documents/UserFiles/Download/a (2).txt") == "new")

        try session.type("mv a.txt Download")
        try session.press("Enter")
        try session.wait { $0.filter { !$0.isWhitespace }.hasSuffix("[r/k/C]") }
        try session.press("Enter")  // the default is to cancel
        try session.waitForLastLine("files:/>")
        #expect(session.screen().contains("was cancelled"))
        #expect(directory.contents("container/Documents/UserFiles/Download/a.txt") == "old")
        #expect(directory.contents("container/Documents/UserFiles/a.txt") == "new")
    }

    @Test func emptyTrashAsksFirst() throws {
        directory.make(["container/Documents/UserFiles/a.txt": "a"])
        let session = try start()
        try session.type("rm a.txt")
        try session.press("Enter")
        try session.type("empty-trash")
        try session.press("Enter")
        try session.waitForLastLine("Delete 1 item (1 B) in the trash for good? This cannot be undone. [y/N]")
        try session.press("Enter")
        try session.waitForLastLine("files:/>")
        #expect(directory.names("container/Library/Trash/files") == ["a.txt"])
        try session.type("empty-trash")
        try session.press("Enter")
        try session.wait { $0.hasSuffix("[y/N]") }
        try session.type("y")
        try session.press("Enter")
        try session.waitForLastLine("files:/>")
        #expect(session.screen().contains("Deleted 1 item."))
        #expect(directory.names("container/Library/Trash/files").isEmpty)
    }

    @Test func coloursOnlyWithoutNoColor() throws {
        let coloured = try start([:])
        try coloured.type("ls")
        try coloured.press("Enter")
        try coloured.wait { $0.contains("Import") }
        #expect(coloured.screen(escapes: true).contains("\u{1B}[1m\u{1B}[34mDownload"))
        coloured.close()

        let plain = try start(["NO_COLOR": "1"])
        try plain.type("ls")
        try plain.press("Enter")
        try plain.wait { $0.contains("Import") }
        #expect(!plain.screen(escapes: true).contains("\u{1B}["))
    }

    @Test func ctrlCCancelsALongCopyAndLeavesNothingBehind() throws {
        try directory.makeSparseFile("container/Documents/UserFiles/big.bin", gigabytes: 6)

        let session = try start()
        try session.type("cp big.bin copy.bin")
        try session.press("Enter")
        // The progress bar shows once the copy has run for half a second.
        try session.wait { $0.contains("Copying") && $0.contains("%") }
        try session.press("C-c")
        try session.waitForLastLine("files:/>", timeout: 30)
        #expect(session.screen().contains("was cancelled"))
        var names = try FileManager.default.contentsOfDirectory(atPath: files).sorted()
        #expect(names == ["Download", "Import", "big.bin"])

        // SIGTERM during a copy cancels it too, then ends the REPL.
        try session.type("cp big.bin copy.bin")
        try session.press("Enter")
        try session.wait { ($0.components(separatedBy: "\n").last ?? "").hasPrefix("Copying") }
        kill(try #require(session.processID), SIGTERM)
        try session.waitForExit(timeout: 30)
        #expect(session.exitStatus == 143)
        names = try FileManager.default.contentsOfDirectory(atPath: files).sorted()
        #expect(names == ["Download", "Import", "big.bin"])
    }
}
