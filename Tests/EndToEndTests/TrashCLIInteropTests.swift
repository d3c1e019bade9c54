import CofferTestSupport
import Foundation
import Testing

/// Cross-checks Coffer's trash with trash-cli 0.26 (PyPI), another implementation of the
/// freedesktop.org Trash specification, both ways.
///
/// trash-cli is found in `$COFFER_TRASH_CLI` (a folder with `trash-put`, `trash-list`,
/// `trash-restore`), else `.ci/venv/bin`, which `.ci/run` creates. Without it the tests
/// are skipped, unless `COFFER_REQUIRE_TRASH_CLI=1` (set by `.ci/run`) makes that a failure.
enum TrashCLI {
    static let tools: String? = {
        let environment = ProcessInfo.processInfo.environment
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let candidates = [environment["COFFER_TRASH_CLI"], packageRoot + "/.ci/venv/bin"].compactMap { $0 }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/trash-put") }
    }()
    static let required = ProcessInfo.processInfo.environment["COFFER_REQUIRE_TRASH_CLI"] == "1"
}

@Suite(.serialized, .enabled(if: TrashCLI.tools != nil || TrashCLI.required,
                             "trash-cli not found; .ci/run installs it in .ci/venv"), .ownsProcesses)
struct TrashCLIInteropTests {

    let directory = TemporaryDirectory("interop")
    var container: String { directory.url("c") }
    var files: String { directory.url("c/Documents/UserFiles") }
    var trash: String { directory.url("c/Library/Trash") }
    /// `files` as other tools write it (no `//`, no links).
    var canonicalFiles: String { URL(fileURLWithPath: files).resolvingSymlinksInPath().path }

    func tool(_ name: String, _ arguments: [String], input: String = "") throws -> (status: Int32, output: String) {
        guard let tools = TrashCLI.tools else { throw Missing() }
        // trash-cli's home trash is $XDG_DATA_HOME/Trash: point it at the container's.
        let environment = ["XDG_DATA_HOME": container + "/Library", "HOME": directory.path,
                           "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"]
        let result = try TestProcess.run([tools + "/" + name] + arguments, input: Data(input.utf8), environment: environment,
                                         workingDirectory: files, timeout: 120)
        return (result.status, result.outputText + result.errorText)
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String { "trash-cli not found (.ci/run installs it in .ci/venv)" }
    }

    func coffer(_ commands: String) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands])
    }

    @Test func trashCLIReadsAndRestoresWhatCofferTrashed() throws {
        _ = try coffer("mkdir '报告 2026'")
        directory.make(["c/Documents/UserFiles/a b%c.txt": "percent", "c/Documents/UserFiles/报告 2026/x.txt": "x"])
        #expect(try coffer("rm 'a b%c.txt' '报告 2026'").status == 0)

        let listed = try tool("trash-list", ["--trash-dir", trash])
        #expect(listed.status == 0)
        let lines = listed.output.split(separator: "\n").map(String.init).sorted()
        #expect(lines.count == 2, "\(listed.output)")
        #expect(lines.contains { $0.hasSuffix(" \(canonicalFiles)/a b%c.txt") })
        #expect(lines.contains { $0.hasSuffix(" \(canonicalFiles)/报告 2026") })
        #expect(lines.allSatisfy { $0.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "#, options: .regularExpression) != nil })

        // trash-restore offers both; restore the folder.
        let menu = try tool("trash-restore", [files], input: "")
        let choice = try #require(menu.output.split(separator: "\n").first { $0.hasSuffix("报告 2026") })
        let index = String(choice.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
        let restored = try tool("trash-restore", [files], input: index + "\n")
        #expect(restored.status == 0, "\(restored.output)")
        #expect(directory.contents("c/Documents/UserFiles/报告 2026/x.txt") == "x")
        // Coffer agrees: one item left, no problems.
        let left = try coffer("trash")
        #expect(left.output.hasPrefix("a b%c.txt  files:/a b%c.txt  "))
        #expect(left.errors.isEmpty)
    }

    @Test func cofferListsAndRestoresWhatTrashCLITrashed() throws {
        _ = try coffer("mkdir Notes")
        directory.make(["c/Documents/UserFiles/Notes/todo list.txt": "todo", "c/Documents/UserFiles/50%.txt": "half"])
        let put = try tool("trash-put", ["--trash-dir", trash, files + "/Notes/todo list.txt", files + "/50%.txt"])
        #expect(put.status == 0, "\(put.output)")
        #expect(!directory.exists("c/Documents/UserFiles/Notes/todo list.txt"))

        let listed = try coffer("trash")
        #expect(listed.status == 0)
        #expect(listed.errors.isEmpty)
        let rows = listed.output.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("todo list.txt  files:/Notes/todo list.txt") })
        #expect(rows.contains { $0.hasPrefix("50%.txt        files:/50%.txt") })

        _ = try coffer("rm Notes")  // the folder is gone too: restore recreates it
        let restored = try coffer("restore 'todo list.txt' 50%.txt")
        #expect(restored.status == 0, "\(restored.errors)")
        #expect(restored.output == "files:/Notes/todo list.txt\nfiles:/50%.txt\n")
        #expect(directory.contents("c/Documents/UserFiles/Notes/todo list.txt") == "todo")
        #expect(directory.contents("c/Documents/UserFiles/50%.txt") == "half")
        // trash-cli sees what is left: the Notes folder Coffer trashed.
        let remaining = try tool("trash-list", ["--trash-dir", trash]).output
        #expect(remaining.hasSuffix(" \(canonicalFiles)/Notes\n"))
    }

    /// `export --replace` moves what it replaces on the host to the desktop trash of the
    /// user's home (a scratch HOME here), where trash-cli finds it and puts it back.
    @Test func trashCLIRestoresWhatAnExportReplaced() throws {
        let home = directory.url("home")
        directory.make(["home/Desktop/Reports/theirs.txt": "the user's own", "home/Desktop/plan.txt": "their plan",
                        "c/Documents/UserFiles/Reports/ours.txt": "ours", "c/Documents/UserFiles/plan.txt": "our plan"])
        let exported = try CofferBinary.run(["--container", container, "--lang", "en", "-c",
                                             "export --replace Reports ~/Desktop; export --replace plan.txt ~/Desktop"],
                                            environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        #expect(exported.status == 0, "\(exported.errors)")
        #expect(directory.contents("home/Desktop/plan.txt") == "our plan")
        let desktop = URL(fileURLWithPath: home + "/Desktop").resolvingSymlinksInPath().path
        let homeTrash = home + "/.local/share/Trash"
        let listed = try tool("trash-list", ["--trash-dir", homeTrash])
        #expect(listed.status == 0)
        let lines = listed.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(listed.output)")
        #expect(lines.contains { $0.hasSuffix(" \(desktop)/Reports") })
        #expect(lines.contains { $0.hasSuffix(" \(desktop)/plan.txt") })
        // trash-cli puts the user's own plan back where it was (after ours is moved aside).
        try FileManager.default.moveItem(atPath: home + "/Desktop/plan.txt", toPath: home + "/ours.txt")
        let menu = try tool("trash-restore", ["--trash-dir", homeTrash, desktop], input: "")
        let choice = try #require(menu.output.split(separator: "\n").first { $0.hasSuffix("plan.txt") }, "\(menu.output)")
        let index = String(choice.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
        let restored = try tool("trash-restore", ["--trash-dir", homeTrash, desktop], input: index + "\n")
        #expect(restored.status == 0, "\(restored.output)")
        #expect(directory.contents("home/Desktop/plan.txt") == "their plan")
    }
}
