import CofferTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Changing a file's content through the built binary (issue 33): saves over the version
/// read, from two RPC clients and the REPL; `edit` in a real terminal; host files saved in
/// place through their bookmarks.
@Suite(.serialized, .ownsProcesses)
struct EditingEndToEndTests {
    let directory = TemporaryDirectory("e2e-edit")
    var container: String { directory.url("container") }
    var home: String { directory.url("home") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }
    /// A host path, as Coffer resolves it (no `//`, no links).
    func host(_ relative: String) -> String {
        URL(fileURLWithPath: directory.url("host/" + relative)).standardizedFileURL.path + (relative.isEmpty ? "/" : "")
    }

    init() throws {
        directory.make(["home/.keep": "", "host/.keep": ""])
        #expect(try CofferBinary.run(["--container", container, "-c", "pwd"]).status == 0)
    }

    /// The REPL with a home of its own: its desktop trash is `home/.local/share/Trash`.
    func coffer(_ commands: String, input: String = "", editor: String? = nil) throws -> CofferBinary.Result {
        var environment = ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"]
        if let editor { environment["EDITOR"] = editor }
        environment["VISUAL"] = ""
        return try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], input: input,
                                    environment: environment)
    }

    /// An editor program: a shell script run on the file to edit.
    func editor(_ name: String, _ body: String) throws -> String {
        let path = directory.url("\(name).sh")
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    func version(_ response: [String: Any]) -> String? { result(response)?["version"] as? String }

    // MARK: Conditional saves across front ends

    @Test func theFirstSaveWinsAcrossTwoRPCClientsAndTheREPL() async throws {
        let first = try RPCProcess(container: container)
        let second = try RPCProcess(container: container)
        defer { first.closeInput(); second.closeInput() }
        _ = try await first.awaitCall("initialize", ["locale": "en"])
        _ = try await second.awaitCall("initialize", ["locale": "en"])
        _ = try await first.awaitCall("files/write", ["path": "Notes.md", "data": "draft\n"])
        let readByFirst = try await first.awaitCall("files/read", ["path": "Notes.md", "encoding": "text"])
        let readBySecond = try await second.awaitCall("files/read", ["path": "Notes.md", "encoding": "text"])
        let read = try #require(version(readByFirst))
        #expect(version(readBySecond) == read)

        let saved = try await first.awaitCall("files/write", ["path": "Notes.md", "data": "first\n", "ifVersion": read])
        let current = try #require(version(saved))
        let refused = try await second.awaitCall("files/write", ["path": "Notes.md", "data": "second\n", "ifVersion": read])
        #expect(errorKind(refused) == "changedSinceRead")
        let message = (refused["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("“files:/Notes.md” was changed by someone else after it was read") && message.hasSuffix("nothing was written."),
                "\(message)")
        #expect(directory.contents(user("Notes.md")) == "first\n")

        // The REPL shows the same version, and its conditional write obeys it the same way.
        let info = try coffer("info Notes.md")
        #expect(info.output.contains("Version:     \(current)"), "\(info.output)")
        let stale = try coffer("write --if-version \(read) Notes.md", input: "from the REPL\n")
        #expect(stale.status == 1 && stale.errors.contains("was changed by someone else after it was read"), "\(stale.errors)")
        #expect(directory.contents(user("Notes.md")) == "first\n")
        let fresh = try coffer("write --if-version \(current) Notes.md", input: "from the REPL\n")
        #expect(fresh.status == 0, "\(fresh.errors)")
        #expect(directory.contents(user("Notes.md")) == "from the REPL\n")
        // And the RPC client that read before the REPL's save is refused.
        let late = try await first.awaitCall("files/write", ["path": "Notes.md", "data": "late\n", "ifVersion": current])
        #expect(errorKind(late) == "changedSinceRead")
        // Every content a save replaced is a version of the file, with who replaced it.
        let versions = try coffer("versions Notes.md")
        let lines = versions.output.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains("repl") && lines[1].contains("rpc"), "\(versions.output)")
    }

    @Test func writeTakesStandardInputAndKeepsAFilesEncoding() throws {
        #expect(try coffer("mkdir Notes").status == 0)
        let written = try coffer("write Notes/a.md", input: "hi\n")
        #expect(written.status == 0 && directory.contents(user("Notes/a.md")) == "hi\n", "\(written.errors)")
        #expect(try coffer("write --append Notes/a.md", input: "more\n").status == 0)
        #expect(directory.contents(user("Notes/a.md")) == "hi\nmore\n")
        let taken = try coffer("write Notes/a.md", input: "again\n")
        #expect(taken.status == 1 && taken.errors.contains("already exists"), "\(taken.errors)")
        #expect(try coffer("write --replace Notes/a.md", input: "again\n").status == 0)
        #expect(directory.contents(user("Notes/a.md")) == "again\n")
        // A UTF-16 file stays UTF-16: the text piped in is converted, its mark not repeated.
        let wide: [UInt8] = [0xFF, 0xFE, 0x68, 0x00, 0x0A, 0x00]
        try Data(wide).write(to: URL(fileURLWithPath: directory.url(user("wide.txt"))))
        #expect(try coffer("write --append wide.txt", input: "中\n").status == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory.url(user("wide.txt"))))) == wide + [0x2D, 0x4E, 0x0A, 0x00])
        // Exported in another encoding.
        let exported = try coffer("export --encoding gb18030 wide.txt '\(host(""))'")
        #expect(exported.status == 0, "\(exported.errors)")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: host("wide.txt"))))
                == [0x68, 0x0A, 0xD6, 0xD0, 0x0A])
        let unknown = try coffer("export --encoding latin1 wide.txt '\(host(""))'")
        #expect(unknown.status == 1 && unknown.errors.contains("--encoding is utf-8"))
    }

    @Test func editSavesBackWhatTheEditorChangedAndNothingElse() throws {
        directory.make([user("plan.txt"): "step one\n"])
        let changing = try editor("change", "sed -i 's/one/two/' \"$1\"")
        let saved = try coffer("edit plan.txt", editor: changing)
        #expect(saved.status == 0 && saved.output == "Saved files:/plan.txt.\n", "\(saved.output) \(saved.errors)")
        #expect(directory.contents(user("plan.txt")) == "step two\n")
        // An editor that fails, or leaves the text as it was, saves nothing.
        let failing = try coffer("edit plan.txt", editor: try editor("fail", "echo oops >> \"$1\"; exit 3"))
        #expect(failing.status == 1 && failing.errors.contains("exited with status 3; nothing was saved"), "\(failing.errors)")
        #expect(directory.contents(user("plan.txt")) == "step two\n")
        let idle = try coffer("edit plan.txt", editor: "true")
        #expect(idle.status == 0 && idle.output == "No changes; nothing was saved.\n")
        // In a script, a file changed meanwhile is not overwritten: the edit is kept in files:/Recovered.
        let racing = try editor("race", "printf 'theirs\\n' > '\(directory.url(user("plan.txt")))'; printf 'mine\\n' > \"$1\"")
        let kept = try coffer("edit plan.txt", editor: racing)
        #expect(kept.status == 1 && kept.errors.contains("was changed by someone else"), "\(kept.errors)")
        #expect(kept.output == "Saved files:/Recovered/plan.txt.\n")
        #expect(directory.contents(user("plan.txt")) == "theirs\n" && directory.contents(user("Recovered/plan.txt")) == "mine\n")
        #expect(directory.names("container/tmp").filter { $0.hasPrefix("edit-") }.isEmpty, "no copy is left behind")
    }

    // MARK: In a terminal

    @Test func editInATerminalAsksWhenTheFileChangedMeanwhile() throws {
        let wide: [UInt8] = [0xFF, 0xFE] + Array("a\r\nb\r\n".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        try Data(wide).write(to: URL(fileURLWithPath: directory.url(user("wide.txt"))))
        directory.make([user("notes.txt"): "v1\n", "action": "append"])
        // What the editor does is read from a file, so one terminal tries every case.
        let script = try editor("terminal", """
            case "$(cat '\(directory.url("action"))')" in
            append) echo edited >> "$1" ;;
            race) printf 'theirs\\n' > '\(directory.url(user("notes.txt")))'; echo mine > "$1" ;;
            fail) exit 1 ;;
            esac
            """)
        let session = try TerminalSession([CofferBinary.url.path, "--container", container, "--lang", "en"],
                                          environment: ["TERM": "screen", "LANG": "C.UTF-8", "HOME": home, "NO_COLOR": "1",
                                                        "EDITOR": script, "XDG_DATA_HOME": home + "/.local/share"])
        try session.waitForLastLine("files:/>")

        try session.type("edit notes.txt\n")
        try session.wait { $0.contains("Saved files:/notes.txt.") }
        try session.waitForLastLine("files:/>")
        #expect(directory.contents(user("notes.txt")) == "v1\nedited\n")

        directory.make(["action": "race"])
        try session.type("edit notes.txt\n")
        try session.wait { $0.contains("[o/b/K/d]") }
        #expect(session.screen().contains("“files:/notes.txt” was changed by someone else after it was read"))
        try session.type("o\n")
        try session.wait { $0.components(separatedBy: "Saved files:/notes.txt.").count == 3 }
        try session.waitForLastLine("files:/>")
        #expect(directory.contents(user("notes.txt")) == "mine\n")

        directory.make(["action": "fail"])
        try session.type("edit notes.txt\n")
        try session.wait { $0.contains("exited with status 1; nothing was saved") }
        #expect(directory.contents(user("notes.txt")) == "mine\n")

        directory.make(["action": "append"])
        try session.type("edit wide.txt\n")
        try session.wait { $0.contains("Saved files:/wide.txt (UTF-16LE).") }
        let expected: [UInt8] = [0xFF, 0xFE] + Array("a\r\nb\r\nedited\n".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory.url(user("wide.txt"))))) == expected)

        try session.type("edit '新的 note.txt'\n")
        try session.wait { $0.contains("Saved files:/新的 note.txt.") }
        #expect(directory.contents(user("新的 note.txt")) == "edited\n")

        // What the overwrite replaced is in the trash, restorable.
        try session.type("trash\n")
        try session.wait { $0.contains("files:/notes.txt") }
        try session.type("quit\n")
        try session.waitForExit()
    }

    // MARK: Host files in place

    @Test func hostFilesAreSavedInPlaceKeepingWhatTheyWere() throws {
        directory.make(["host/linked.txt": "linked v1\n", "host/target.txt": "target v1\n", "host/plain.txt": "plain v1\n"])
        #expect(link(host("linked.txt"), host("second name.txt")) == 0)
        #expect(symlink("target.txt", host("shortcut.txt")) == 0)
        for name in ["linked.txt", "plain.txt"] {
            #expect(chmod(host(name), 0o640) == 0)
            #expect(try attribute(["setfattr", "-n", "user.comment", "-v", "kept", host(name)]).isEmpty)
        }
        let linkedInode = try inode(host("linked.txt")), targetInode = try inode(host("target.txt"))

        // Several hard links: rewritten in place, so every name sees the new text.
        let first = try coffer("write host:\(host("linked.txt"))", input: "linked v2\n")
        #expect(first.status == 0, "\(first.errors)")
        #expect(directory.contents("host/second name.txt") == "linked v2\n")
        #expect(try inode(host("linked.txt")) == linkedInode)
        // Behind a symbolic link: the link stays a link to the same file.
        #expect(try coffer("write host:\(host("shortcut.txt"))", input: "target v2\n").status == 0)
        #expect(try String(contentsOfFile: host("shortcut.txt"), encoding: .utf8) == "target v2\n")
        #expect((try FileManager.default.destinationOfSymbolicLink(atPath: host("shortcut.txt"))) == "target.txt")
        #expect(try inode(host("target.txt")) == targetInode)
        // An ordinary file: a new file renamed into place, with the mode and the attribute kept.
        let editing = try editor("host", "sed -i 's/v1/v2/' \"$1\"")
        let edited = try coffer("edit host:\(host("plain.txt"))", editor: editing)
        #expect(edited.status == 0 && edited.output == "Saved \(host("plain.txt")).\n", "\(edited.output) \(edited.errors)")
        #expect(directory.contents("host/plain.txt") == "plain v2\n")
        for name in ["linked.txt", "plain.txt"] {
            var info = stat()
            #expect(stat(host(name), &info) == 0 && info.st_mode & 0o7777 == 0o640, "\(name) keeps its mode")
            let value = try attribute(["getfattr", "--only-values", "-n", "user.comment", host(name)])
            #expect(value == "kept", "\(name) keeps its attribute")
        }
        // Every bookmark still finds its file, and each old content is in the desktop trash.
        let bookmarks = try coffer("bookmarks")
        #expect(bookmarks.output.components(separatedBy: "\n").filter { $0.contains("  ok  ") }.count == 3, "\(bookmarks.output)")
        let trashed = directory.names("home/.local/share/Trash/files")
        #expect(Set(trashed) == ["linked.txt", "target.txt", "plain.txt"], "\(trashed)")
        #expect(directory.contents("home/.local/share/Trash/files/plain.txt") == "plain v1\n")

        // A save over a version that is gone is refused, and so is one to a file replaced by another.
        let id = bookmarks.output.components(separatedBy: "\n").first { $0.hasSuffix("/plain.txt") }?
            .trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? "?"
        let stale = try coffer("write --if-version 0123456789abcdef --bookmark \(id)", input: "x\n")
        #expect(stale.status == 1 && stale.errors.contains("“host:/plain.txt” was changed by someone else"), "\(stale.errors)")
        try FileManager.default.removeItem(atPath: host("plain.txt"))
        directory.make(["host/plain.txt": "a different file\n"])
        let replaced = try coffer("write --bookmark \(id)", input: "x\n")
        #expect(replaced.status == 1 && replaced.errors.contains("was deleted or replaced"), "\(replaced.errors)")
        #expect(directory.contents("host/plain.txt") == "a different file\n")
    }

    @Test func anRPCClientSavesAHostFileThroughItsBookmark() async throws {
        directory.make(["host/doc.txt": "one\n"])
        let rpc = try RPCProcess(container: container, arguments: ["--allow-host", host("")],
                                 environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        defer { rpc.closeInput() }
        _ = try await rpc.awaitCall("initialize", ["locale": "en"])
        let opened = try #require(result(try await rpc.awaitCall("host/open", ["hostPath": host("doc.txt")])))
        let id = try #require(opened["bookmarkId"] as? Int)
        let read = try #require(result(try await rpc.awaitCall("files/read", ["bookmarkId": id, "encoding": "text"])))
        #expect(read["data"] as? String == "one\n")
        let version = try #require(read["version"] as? String)
        #expect((opened["node"] as? [String: Any])?["version"] as? String == version)
        let saved = try await rpc.awaitCall("files/write", ["bookmarkId": id, "data": "two\n", "ifVersion": version])
        #expect(result(saved)?["path"] as? String == host("doc.txt"), "\(saved)")
        let refused = try await rpc.awaitCall("files/write", ["bookmarkId": id, "data": "three\n", "ifVersion": version])
        #expect(errorKind(refused) == "changedSinceRead")
        let unasked = try await rpc.awaitCall("files/write", ["bookmarkId": id, "data": "four\n", "conflict": "ask"])
        #expect(errorKind(unasked) == "invalidArgument", "\(unasked)")
        #expect(directory.contents("host/doc.txt") == "two\n")
        let both = try await rpc.awaitCall("files/write", ["path": "a.txt", "bookmarkId": id, "data": "x"])
        #expect((both["error"] as? [String: Any])?["code"] as? Int == -32602)
    }

    /// Runs `setfattr` or `getfattr` (Debian's `attr`, which `.ci/run` installs); returns what it printed.
    func attribute(_ arguments: [String]) throws -> String {
        let result = try TestProcess.run(arguments, timeout: 60)
        guard result.status == 0 else { throw CocoaError(.fileReadUnknown) }
        return result.outputText
    }

    func inode(_ path: String) throws -> UInt64 {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return UInt64(info.st_ino)
    }
}
