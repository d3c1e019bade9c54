import CofferTestSupport
import Foundation
import Testing

/// Issue 52 through the built binary: versions from every front end, a save by rename over a
/// file, and undoing an agent's twenty changes.
@Suite(.ownsProcesses) struct VersionsEndToEndTests {
    let directory = TemporaryDirectory("e2e-versions")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }

    func coffer(_ commands: String, input: String = "") throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], input: input)
    }

    /// Every item below `files:`, by path: a file's bytes and tags, or "folder" and its tags.
    func tree() -> [String: String] {
        var found: [String: String] = [:]
        let root = directory.url(user(""))
        let walker = FileManager.default.enumerator(atPath: root)
        while let relative = walker?.nextObject() as? String {
            let path = root + "/" + relative
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            let read = try? TestProcess.run(["getfattr", "--only-values", "-n", "user.xdg.tags", path], timeout: 60)
            let tagText = read?.status == 0 ? read?.outputText ?? "" : ""
            let content = isFolder.boolValue ? "folder" : (FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? "?")
            found[relative] = content + " [" + tagText + "]"
        }
        return found
    }

    // MARK: Five saves, from each front end

    @Test func fiveSavesFromTheREPL() throws {
        #expect(try coffer("write notes.txt", input: "v0").status == 0)
        for index in 1...5 { #expect(try coffer("write --replace notes.txt", input: "v\(index)").status == 0) }
        let listed = try coffer("versions notes.txt")
        let lines = listed.output.split(separator: "\n")
        #expect(lines.count == 5, "\(listed.output)")
        // Newest first, each with its date (YYYY-MM-DD HH:MM:SS), size and who replaced it.
        #expect(lines.allSatisfy { $0.contains(" 2 B ") && $0.contains("repl") && $0.contains(":") }, "\(listed.output)")
        let ids = lines.compactMap { $0.split(separator: " ").first.map(String.init) }
        let second = ids[3]  // v1, the second content the file had
        #expect(try coffer("cat --version \(second) notes.txt").output.trimmingCharacters(in: .newlines) == "v1")
        #expect(try coffer("restore --version \(second) notes.txt").status == 0)
        #expect(directory.contents(user("notes.txt")) == "v1")
        let after = try coffer("versions --json notes.txt")
        let versions = try #require((try JSONSerialization.jsonObject(with: Data(after.output.utf8)) as? [String: Any])?["versions"] as? [[String: Any]])
        #expect(versions.count == 6)
        let newest = try #require(versions.first?["id"] as? Int)
        #expect(try coffer("cat --version \(newest) notes.txt").output.trimmingCharacters(in: .newlines) == "v5")
    }

    @Test func fiveSavesOverRPCAndASaveByRename() throws {
        let rpc = try RPCProcess(container: container)
        try rpc.initialize()
        for index in 0...5 {
            #expect(result(try rpc.call("files/write", ["path": "/notes.txt", "data": "v\(index)", "conflict": "replace"])) != nil)
        }
        let versions = try #require(result(try rpc.call("files/versions", ["path": "/notes.txt"]))?["versions"] as? [[String: Any]])
        #expect(versions.count == 5)
        #expect(versions.allSatisfy { ($0["date"] as? String)?.hasSuffix("Z") == true && $0["frontEnd"] as? String == "rpc" })
        let second = try #require(versions[3]["id"] as? Int)
        #expect(result(try rpc.call("files/restoreVersion", ["path": "/notes.txt", "id": second])) != nil)
        #expect(directory.contents(user("notes.txt")) == "v1")
        let after = try #require(result(try rpc.call("files/versions", ["path": "/notes.txt"]))?["versions"] as? [[String: Any]])
        #expect(after.count == 6)

        // As LibreOffice saves: a temporary file written, then renamed over the document.
        #expect(result(try rpc.call("files/write", ["path": "/report.odt", "data": "draft 1"])) != nil)
        #expect(result(try rpc.call("files/write", ["path": "/.~lock.report.tmp", "data": "draft 2"])) != nil)
        #expect(result(try rpc.call("files/rename", ["path": "/.~lock.report.tmp", "newName": "report.odt", "conflict": "replace"])) != nil)
        #expect(directory.contents(user("report.odt")) == "draft 2")
        let kept = try #require(result(try rpc.call("files/versions", ["path": "/report.odt"]))?["versions"] as? [[String: Any]])
        #expect(kept.count == 1 && kept.first?["size"] as? Int == 7)
        #expect((result(try rpc.call("trash/list"))?["items"] as? [[String: Any]])?.isEmpty == true)
        rpc.closeInput()
        _ = try rpc.waitForExit()
    }

    @Test func fiveSavesOverMCP() async throws {
        let mcp = try await RPCProcess.mcp(container: container)
        func tool(_ name: String, _ arguments: [String: Any]) async throws -> [String: Any] {
            let answer = try #require(result(try await mcp.awaitCall("tools/call", ["name": name, "arguments": arguments])))
            #expect(answer["isError"] as? Bool != true, "\(name): \(answer)")
            return answer["structuredContent"] as? [String: Any] ?? [:]
        }
        for index in 0...5 { _ = try await tool("write_file", ["path": "files:/notes.txt", "content": "v\(index)"]) }
        let versions = try #require(try await tool("list_versions", ["path": "files:/notes.txt"])["versions"] as? [[String: Any]])
        #expect(versions.count == 5 && versions.allSatisfy { $0["by"] as? String == "mcp" && $0["date"] != nil })
        let second = try #require(versions[3]["id"] as? Int)
        _ = try await tool("restore_version", ["path": "files:/notes.txt", "id": second])
        #expect(directory.contents(user("notes.txt")) == "v1")
        let after = try #require(try await tool("list_versions", ["path": "files:/notes.txt"])["versions"] as? [[String: Any]])
        #expect(after.count == 6)
        mcp.closeInput()
        _ = try mcp.waitForExit()
    }

    // MARK: Undo

    /// Twenty changes by an agent: writes, edits, moves, a folder made and filled, deletions,
    /// tags. `undo_changes` brings back the tree as it was, names, bytes and tags; a file a REPL
    /// changed meanwhile is listed and left alone.
    @Test func anAgentsTwentyChangesAreUndone() async throws {
        directory.make([user("Notes/a.md"): "alpha\n", user("Notes/b.md"): "beta\n", user("Notes/c.md"): "gamma\n",
                        user("Old/keep.txt"): "keep\n", user("Old/drop.txt"): "drop\n", user("plan.txt"): "plan\n"])
        #expect(try coffer("tag Notes/a.md +draft").status == 0)
        let before = tree()
        let mcp = try await RPCProcess.mcp(container: container)
        var changes = 0
        func tool(_ name: String, _ arguments: [String: Any]) async throws -> [String: Any] {
            let answer = try #require(result(try await mcp.awaitCall("tools/call", ["name": name, "arguments": arguments])))
            #expect(answer["isError"] as? Bool != true, "\(name): \(answer)")
            changes += 1
            return answer["structuredContent"] as? [String: Any] ?? [:]
        }
        _ = try await tool("write_file", ["path": "files:/Notes/a.md", "content": "alpha, rewritten\n"])
        _ = try await tool("edit_file", ["path": "files:/Notes/b.md", "edits": [["oldText": "beta", "newText": "BETA"]]])
        _ = try await tool("edit_file", ["path": "files:/Notes/b.md", "edits": [["oldText": "BETA", "newText": "beta two"]]])
        _ = try await tool("write_file", ["path": "files:/plan.txt", "content": "plan, by the agent\n"])
        _ = try await tool("move_file", ["source": "files:/Notes/c.md", "destination": "files:/Old/c.md"])
        _ = try await tool("move_file", ["source": "files:/Old/keep.txt", "destination": "files:/kept.txt"])
        _ = try await tool("create_directory", ["path": "files:/Project"])
        _ = try await tool("create_directory", ["path": "files:/Project/src"])
        _ = try await tool("write_file", ["path": "files:/Project/README.md", "content": "# Project\n"])
        _ = try await tool("write_file", ["path": "files:/Project/src/main.txt", "content": "main\n"])
        _ = try await tool("copy_file", ["source": "files:/Notes/a.md", "destination": "files:/Project/a copy.md"])
        _ = try await tool("trash_file", ["path": "files:/Old/drop.txt"])
        _ = try await tool("tag_files", ["paths": ["files:/Notes/b.md", "files:/Project"], "add": ["agent"]])
        _ = try await tool("tag_files", ["paths": ["files:/Notes/a.md"], "remove": ["draft"]])
        _ = try await tool("move_file", ["source": "files:/Project/README.md", "destination": "files:/Project/INTRO.md"])
        _ = try await tool("write_file", ["path": "files:/Project/INTRO.md", "content": "# Intro\n"])
        _ = try await tool("trash_file", ["path": "files:/Notes/b.md"])
        _ = try await tool("write_file", ["path": "files:/scratch.txt", "content": "scratch\n"])
        _ = try await tool("move_file", ["source": "files:/scratch.txt", "destination": "files:/Project/scratch.txt"])
        _ = try await tool("edit_file", ["path": "files:/Notes/a.md", "edits": [["oldText": "rewritten", "newText": "edited"]]])
        #expect(changes == 20)
        #expect(tree() != before)

        // Listed first, then undone: the tree is as it was.
        let dry = try await tool("undo_changes", ["dryRun": true])
        #expect((dry["reverted"] as? [Any])?.count ?? 0 >= 20, "\(dry)")
        #expect(tree() != before)
        let undone = try await tool("undo_changes", [:])
        #expect((undone["skipped"] as? [Any])?.isEmpty == true && (undone["failed"] as? [Any])?.isEmpty == true, "\(undone)")
        #expect(tree() == before, "\(tree()) != \(before)")
        // The undo is a session of its own: undoing it redoes the agent's work.
        let undoSession = try #require(undone["undoSession"] as? String)
        _ = try await tool("undo_changes", ["session": undoSession])
        #expect(directory.contents(user("Project/INTRO.md")) == "# Intro\n")
        mcp.closeInput()
        _ = try mcp.waitForExit()
    }

    @Test func aFileChangedMeanwhileIsLeftAlone() async throws {
        directory.make([user("a.txt"): "a\n", user("b.txt"): "b\n"])
        let mcp = try await RPCProcess.mcp(container: container)
        func tool(_ name: String, _ arguments: [String: Any]) async throws -> [String: Any] {
            let answer = try #require(result(try await mcp.awaitCall("tools/call", ["name": name, "arguments": arguments])))
            #expect(answer["isError"] as? Bool != true, "\(name): \(answer)")
            return answer["structuredContent"] as? [String: Any] ?? [:]
        }
        _ = try await tool("write_file", ["path": "files:/a.txt", "content": "a by the agent\n"])
        _ = try await tool("write_file", ["path": "files:/b.txt", "content": "b by the agent\n"])
        _ = try await tool("write_file", ["path": "files:/c.txt", "content": "c by the agent\n"])
        // A person saves over b.txt from the REPL.
        #expect(try coffer("write --replace b.txt", input: "b by a person\n").status == 0)
        let undone = try await tool("undo_changes", [:])
        let skipped = try #require(undone["skipped"] as? [[String: Any]])
        #expect(skipped.count == 1 && (skipped.first?["path"] as? String)?.hasSuffix("b.txt") == true, "\(undone)")
        #expect((skipped.first?["reason"] as? String)?.contains("repl") == true, "\(skipped)")
        #expect(directory.contents(user("a.txt")) == "a\n")
        #expect(directory.contents(user("b.txt")) == "b by a person\n")
        #expect(!FileManager.default.fileExists(atPath: directory.url(user("c.txt"))))
        // From the REPL: the sessions, and --force for what was left.
        let listed = try coffer("changes")
        #expect(listed.output.contains("mcp") && listed.output.contains("repl"), "\(listed.output)")
        mcp.closeInput()
        _ = try mcp.waitForExit()
    }
}
