import CofferTestSupport
import Foundation
import Synchronization
import Testing

/// `coffer mcp` over pipes, as an MCP client drives it: both protocol eras, every tool of
/// the reference filesystem server and Coffer's own, errors, progress, cancellation,
/// resources, roots, and the confinement attacks the reference server has had advisories for.
@Suite(.ownsProcesses) struct MCPEndToEndTests {
    let directory = TemporaryDirectory("e2e-mcp")
    var container: String { directory.url("container") }
    /// The allowed directory of MCP clients: the `files:` root's host path.
    var root: String { directory.url("container/Documents/UserFiles") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }

    static var stateless: [String: Any] {
        ["io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [String: Any]()]
    }

    /// A server, initialized in the handshake era unless `initialize` is false.
    func server(_ arguments: [String] = [], environment: [String: String] = [:], initialize: Bool = true,
                capabilities: [String: Any] = [:]) async throws -> RPCProcess {
        let mcp = try RPCProcess(container: container, command: "mcp", arguments: arguments, environment: environment)
        if initialize {
            let answer = try await mcp.awaitCall("initialize", ["protocolVersion": "2025-11-25", "capabilities": capabilities,
                                                                "clientInfo": ["name": "tests", "version": "1"]])
            #expect(result(answer)?["protocolVersion"] as? String == "2025-11-25")
            mcp.notify("notifications/initialized")
        }
        return mcp
    }

    /// Calls a tool and returns its result (failing the test on a protocol error).
    @discardableResult
    func tool(_ mcp: RPCProcess, _ name: String, _ arguments: [String: Any] = [:], stateless: Bool = false, timeout: Double = 30,
              sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        var params: [String: Any] = ["name": name, "arguments": arguments]
        if stateless { params["_meta"] = Self.stateless }
        let answer = try await mcp.awaitCall("tools/call", params, timeout: timeout)
        return try #require(result(answer), "\(answer)", sourceLocation: sourceLocation)
    }

    func text(_ result: [String: Any]) -> String {
        ((result["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
    }
    func structured(_ result: [String: Any]) -> [String: Any] { result["structuredContent"] as? [String: Any] ?? [:] }
    func failed(_ result: [String: Any]) -> Bool { result["isError"] as? Bool == true }

    // MARK: Eras

    @Test func theHandshakeNegotiatesAVersionAndAnswersPing() async throws {
        let mcp = try await server(initialize: false)
        let old = try #require(result(try await mcp.awaitCall("initialize", ["protocolVersion": "2025-06-18", "capabilities": [:]])))
        #expect(old["protocolVersion"] as? String == "2025-06-18")
        let unknown = try #require(result(try await mcp.awaitCall("initialize", ["protocolVersion": "1999-01-01"])))
        #expect(unknown["protocolVersion"] as? String == "2025-11-25")
        #expect((unknown["serverInfo"] as? [String: Any])?["name"] as? String == "coffer")
        #expect((unknown["capabilities"] as? [String: Any])?["tools"] != nil)
        // Handshake-era results carry nothing of a later revision.
        #expect(unknown["resultType"] == nil)
        let ping = try await mcp.awaitCall("ping")
        #expect(result(ping)?.isEmpty == true)
        mcp.closeInput()
        #expect(try await offPool { try mcp.waitForExit() } == 0)
        // Standard output held only protocol messages.
        for frame in mcp.frames {
            let message = try #require(try JSONSerialization.jsonObject(with: frame) as? [String: Any])
            #expect(message["jsonrpc"] as? String == "2.0")
        }
    }

    @Test func theStatelessRevisionDiscoversAndAnswersEachRequestOnItsOwn() async throws {
        let mcp = try await server(initialize: false)
        let discover = try #require(result(try await mcp.awaitCall("server/discover", ["_meta": Self.stateless])))
        #expect(discover["supportedVersions"] as? [String] == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
        #expect(discover["resultType"] as? String == "complete")
        #expect(discover["ttlMs"] is Int && discover["cacheScope"] as? String == "private")
        let info = (discover["_meta"] as? [String: Any])?["io.modelcontextprotocol/serverInfo"] as? [String: Any]
        #expect(info?["name"] as? String == "coffer")
        // No initialize: a request that names its revision is answered in it.
        let tools = try #require(result(try await mcp.awaitCall("tools/list", ["_meta": Self.stateless])))
        #expect(tools["resultType"] as? String == "complete")
        #expect(tools["ttlMs"] as? Int == 3_600_000)
        let call = try await tool(mcp, "list_allowed_directories", stateless: true)
        #expect(call["resultType"] as? String == "complete" && call["ttlMs"] == nil)
        // The same connection, a handshake-era request: answered in that era.
        let legacy = try #require(result(try await mcp.awaitCall("tools/list")))
        #expect(legacy["resultType"] == nil && legacy["ttlMs"] == nil)
        // A revision Coffer does not speak.
        var meta = Self.stateless
        meta["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
        let refused = try await mcp.awaitCall("tools/list", ["_meta": meta])
        #expect(errorCode(refused) == -32022)
        let data = (refused["error"] as? [String: Any])?["data"] as? [String: Any]
        #expect(data?["requested"] as? String == "2099-01-01")
        #expect((data?["supported"] as? [String])?.contains("2026-07-28") == true)
    }

    @Test func everyToolHasSchemasAndTruthfulAnnotations() async throws {
        let mcp = try await server()
        let tools = try #require(result(try await mcp.awaitCall("tools/list"))?["tools"] as? [[String: Any]])
        let names = Set(tools.compactMap { $0["name"] as? String })
        let reference: Set = ["read_text_file", "read_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
                              "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
                              "search_files", "get_file_info", "list_allowed_directories"]
        #expect(reference.isSubset(of: names))
        #expect(names.isSuperset(of: ["copy_file", "trash_file", "list_trash", "restore_file", "find_files",
                                      "search_file_contents", "import_files", "export_file", "download_file"]))
        #expect(!names.contains { $0.contains("delete") })
        for tool in tools {
            let name = tool["name"] as? String ?? "?"
            let input = try #require(tool["inputSchema"] as? [String: Any], "\(name)")
            #expect(input["type"] as? String == "object", "\(name)")
            // The default list is lean: no output schemas (`--structured` adds them).
            #expect(tool["outputSchema"] == nil, "\(name)")
            // Hints as MCP defines them, a default left out: readOnly false, destructive true,
            // idempotent false, openWorld true.
            let annotations = try #require(tool["annotations"] as? [String: Any], "\(name)")
            let readOnly = annotations["readOnlyHint"] as? Bool ?? false
            let destructive = annotations["destructiveHint"] as? Bool ?? true
            // Only a download reaches outside Coffer (the web).
            #expect(annotations["openWorldHint"] as? Bool ?? true == (name == "download_file"), "\(name)")
            let reads: Set = ["read_text_file", "read_file", "read_media_file", "read_multiple_files", "list_directory",
                              "list_directory_with_sizes", "directory_tree", "search_files", "get_file_info",
                              "list_allowed_directories", "list_trash", "list_versions", "find_files", "search_file_contents"]
            #expect(readOnly == reads.contains(name), "\(name)")
            if ["trash_file", "create_directory", "restore_file", "restore_version", "undo_changes"].contains(name) {
                #expect(!destructive, "\(name)")
            }
            if ["write_file", "edit_file", "move_file"].contains(name) { #expect(destructive, "\(name)") }
        }
        // `--structured`: every tool with its output schema; `--tools official`: the reference tools alone.
        let structured = try await server(["--structured"])
        let full = try #require(result(try await structured.awaitCall("tools/list"))?["tools"] as? [[String: Any]])
        for tool in full {
            let schema = try #require(tool["outputSchema"] as? [String: Any], "\(tool["name"] ?? "?")")
            #expect((schema["properties"] as? [String: Any])?["content"] != nil)
        }
        let official = try await server(["--tools", "official"])
        let listed = try #require(result(try await official.awaitCall("tools/list"))?["tools"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["name"] as? String }) == reference)
        let refused = try await official.awaitCall("tools/call", ["name": "copy_file", "arguments": ["source": "a", "destination": "b"]])
        #expect((refused["error"] as? [String: Any])?["code"] as? Int == -32602)
    }

    // MARK: The reference server's tools

    @Test func readsWritesAndEditsTextByHostAndVirtualPaths() async throws {
        directory.make([user("notes.txt"): "one\ntwo\nthree\nfour\nfive\n"])
        let mcp = try await server()
        let whole = try await tool(mcp, "read_text_file", ["path": root + "/notes.txt"])
        #expect(text(whole) == "one\ntwo\nthree\nfour\nfive\n")
        #expect(structured(whole)["content"] as? String == text(whole))
        #expect(structured(whole)["charset"] as? String == "UTF-8")
        #expect(text(try await tool(mcp, "read_text_file", ["path": "files:/notes.txt", "head": 2])) == "one\ntwo\n")
        #expect(text(try await tool(mcp, "read_file", ["path": "notes.txt", "tail": 2])) == "four\nfive\n")
        let part = try await tool(mcp, "read_text_file", ["path": "notes.txt", "offset": 4, "length": 4])
        #expect(text(part) == "two\n" && structured(part)["bytesRead"] as? Int == 4)
        #expect(failed(try await tool(mcp, "read_text_file", ["path": "notes.txt", "head": 1, "tail": 1])))

        let written = try await tool(mcp, "write_file", ["path": root + "/new/../made.txt", "content": "新的\n"])
        #expect(text(written) == "Successfully wrote to \(root)/made.txt")
        #expect(directory.contents(user("made.txt")) == "新的\n")
        // Replaced by default, as the reference server does; not when asked to fail.
        try await tool(mcp, "write_file", ["path": "made.txt", "content": "second"])
        #expect(directory.contents(user("made.txt")) == "second")
        #expect(failed(try await tool(mcp, "write_file", ["path": "made.txt", "content": "x", "conflict": "fail"])))
        let kept = try await tool(mcp, "write_file", ["path": "made.txt", "content": "third", "conflict": "keepBoth"])
        #expect((structured(kept)["file"] as? [String: Any])?["name"] as? String == "made (2).txt")
        try await tool(mcp, "write_file", ["path": "made.txt", "content": " and more", "append": true])
        #expect(directory.contents(user("made.txt")) == "second and more")
        try await tool(mcp, "write_file", ["path": "fresh.txt", "content": "begun", "append": true])
        #expect(directory.contents(user("fresh.txt")) == "begun")

        let multiple = try await tool(mcp, "read_multiple_files", ["paths": ["notes.txt", "missing.txt", root + "/made.txt"]])
        #expect(text(multiple).contains("notes.txt:\none\n") && text(multiple).contains("missing.txt: Error - "))
        let entries = structured(multiple)["files"] as? [[String: Any]]
        #expect(entries?.count == 3 && entries?[1]["error"] is String && entries?[2]["content"] as? String == "second and more")
    }

    /// `ifVersion` (issue 33): a model that read a file saves over that version only.
    @Test func writesAndEditsCanBeConditionalOnTheVersionRead() async throws {
        directory.make([user("plan.md"): "one\n"])
        let mcp = try await server()
        let version = try #require(structured(try await tool(mcp, "get_file_info", ["path": "plan.md"]))["version"] as? String)
        let written = try await tool(mcp, "write_file", ["path": "plan.md", "content": "two\n", "ifVersion": version])
        let current = try #require((structured(written)["file"] as? [String: Any])?["version"] as? String)
        #expect(current != version)
        let stale = try await tool(mcp, "write_file", ["path": "plan.md", "content": "lost?\n", "ifVersion": version])
        #expect(failed(stale) && text(stale).contains("was changed by someone else after it was read"), "\(text(stale))")
        let staleEdit = try await tool(mcp, "edit_file", ["path": "plan.md", "ifVersion": version,
                                                          "edits": [["oldText": "two", "newText": "three"]]])
        #expect(failed(staleEdit))
        #expect(directory.contents(user("plan.md")) == "two\n")
        try await tool(mcp, "edit_file", ["path": "plan.md", "ifVersion": current, "edits": [["oldText": "two", "newText": "three"]]])
        #expect(directory.contents(user("plan.md")) == "three\n")
        let mixed = try await tool(mcp, "write_file", ["path": "plan.md", "content": "x", "ifVersion": current, "conflict": "fail"])
        #expect(failed(mixed))
    }

    @Test func editsApplyTogetherShowADiffAndSayWhichEditMissed() async throws {
        directory.make([user("code.py"): "def f():\n    return 1\n\ndef g():\n    return 2\n"])
        let mcp = try await server()
        let dry = try await tool(mcp, "edit_file", ["path": "code.py", "dryRun": true,
                                                    "edits": [["oldText": "return 1", "newText": "return 10"]]])
        #expect(text(dry).hasPrefix("```diff\n"))
        #expect(text(dry).contains("-    return 1\n+    return 10\n"))
        #expect(structured(dry)["applied"] as? Bool == false)
        #expect(directory.contents(user("code.py"))?.contains("return 10") == false)
        // Indentation the model got wrong still matches line by line, and keeps the file's.
        let applied = try await tool(mcp, "edit_file", ["path": root + "/code.py", "edits": [
            ["oldText": "return 1", "newText": "return 10"],
            ["oldText": "def g():\n  return 2", "newText": "def g():\n  return 20"],
        ]])
        #expect(structured(applied)["applied"] as? Bool == true)
        #expect(directory.contents(user("code.py")) == "def f():\n    return 10\n\ndef g():\n    return 20\n")
        // One edit of two misses: nothing changes, and the answer names it and the closest text.
        let missed = try await tool(mcp, "edit_file", ["path": "code.py", "edits": [
            ["oldText": "return 10", "newText": "return 11"],
            ["oldText": "def h():\n    return 20", "newText": "x"],
        ]])
        #expect(failed(missed))
        #expect(text(missed).contains("edit 2 of 2"))
        #expect(text(missed).contains("line 4"), "\(text(missed))")
        #expect(text(missed).contains("def g():"))
        #expect(directory.contents(user("code.py")) == "def f():\n    return 10\n\ndef g():\n    return 20\n")
    }

    /// Writes `gb.txt`, “年度报告\n针在这里\n” in GB 18030 (from iconv), and `u16.txt`,
    /// “第一行 针在此” in UTF-16LE with its mark, its lines ended with `lineEnd`; returns the first.
    @discardableResult
    func writeChineseSamples(lineEnd: String) throws -> Data {
        let gb = Data([0xC4, 0xEA, 0xB6, 0xC8, 0xB1, 0xA8, 0xB8, 0xE6, 0x0A, 0xD5, 0xEB, 0xD4, 0xDA, 0xD5, 0xE2, 0xC0, 0xEF, 0x0A])
        try gb.write(to: URL(fileURLWithPath: directory.url(user("gb.txt"))))
        var utf16 = Data([0xFF, 0xFE])
        utf16.append("第一行\(lineEnd)针在此\(lineEnd)".data(using: .utf16LittleEndian)!)
        try utf16.write(to: URL(fileURLWithPath: directory.url(user("u16.txt"))))
        return gb
    }

    @Test func editsKeepTheFilesOwnEncoding() async throws {
        directory.make([user("plain.txt"): "plain"])
        // Edited as text, saved in their own encodings.
        let gb = try writeChineseSamples(lineEnd: "\r\n")
        let mcp = try await server()
        let edited = try await tool(mcp, "edit_file", ["path": "gb.txt", "edits": [["oldText": "针在这里", "newText": "针在那里"]]])
        #expect(structured(edited)["applied"] as? Bool == true, "\(text(edited))")
        #expect(text(edited).contains("-针在这里\n+针在那里\n"))
        let saved = try Data(contentsOf: URL(fileURLWithPath: directory.url(user("gb.txt"))))
        // 那 is C4 C7 in GB 18030; the rest of the file is byte for byte as it was.
        #expect(Array(saved) == Array(gb.prefix(13)) + [0xC4, 0xC7] + Array(gb.suffix(3)), "\(Array(saved))")
        let reread = try await tool(mcp, "read_text_file", ["path": "gb.txt"])
        #expect(text(reread).contains("针在那里"))

        _ = try await tool(mcp, "edit_file", ["path": "u16.txt", "edits": [["oldText": "第一行", "newText": "第 1 行"]]])
        var expected = Data([0xFF, 0xFE])
        expected.append("第 1 行\r\n针在此\r\n".data(using: .utf16LittleEndian)!)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.url(user("u16.txt")))) == expected)
    }

    @Test func foldersListTreesAndSearches() async throws {
        directory.make([user("src/a.swift"): "let a = 1", user("src/deep/b.swift"): "let b = 22",
                        user("src/node_modules/x.swift"): "x", user("README.md"): "# readme", user(".hidden"): "h"])
        let mcp = try await server()
        let created = try await tool(mcp, "create_directory", ["path": root + "/docs/2026/一月"])
        #expect(!failed(created) && directory.exists(user("docs/2026/一月")))
        #expect(!failed(try await tool(mcp, "create_directory", ["path": "files:/docs/2026"])))  // exists: fine

        let listing = text(try await tool(mcp, "list_directory", ["path": root]))
        #expect(listing.split(separator: "\n").contains("[DIR] src"))
        #expect(listing.split(separator: "\n").contains("[FILE] README.md"))
        #expect(listing.contains("[FILE] .hidden"))

        let sized = try await tool(mcp, "list_directory_with_sizes", ["path": root + "/src", "sortBy": "size"])
        #expect(text(sized).contains("Total: 1 files, 2 directories"))
        #expect(structured(sized)["totalSize"] as? Int == 9)

        let tree = try await tool(mcp, "directory_tree", ["path": root + "/src", "excludePatterns": ["node_modules"]])
        let entries = try #require(structured(tree)["tree"] as? [[String: Any]])
        // Folders first, as every listing shows them.
        #expect(entries.map { $0["name"] as? String } == ["deep", "a.swift"])
        #expect((entries[0]["children"] as? [[String: Any]])?.first?["name"] as? String == "b.swift")
        #expect(entries[1]["children"] == nil && entries[0]["type"] as? String == "directory")
        let shallow = try await tool(mcp, "directory_tree", ["path": "src", "maxDepth": 1])
        let top = try #require(structured(shallow)["tree"] as? [[String: Any]])
        #expect((top.first { $0["name"] as? String == "deep" }?["children"] as? [Any])?.isEmpty == true)

        // Globs as minimatch reads them: `**/` is any number of folders, none too; `*` stays in one.
        // search_files' excludes are plain minimatch patterns on the path below the folder, as the
        // reference server has them: a folder anywhere is `**/node_modules`.
        let found = try await tool(mcp, "search_files", ["path": root, "pattern": "**/*.swift", "excludePatterns": ["**/node_modules"]])
        #expect(Set(text(found).split(separator: "\n").map(String.init)) == [root + "/src/a.swift", root + "/src/deep/b.swift"])
        let below = try await tool(mcp, "search_files", ["path": root, "pattern": "src/**/*.swift"])
        #expect(Set(text(below).split(separator: "\n").map(String.init))
                == [root + "/src/a.swift", root + "/src/deep/b.swift", root + "/src/node_modules/x.swift"])
        #expect(text(try await tool(mcp, "search_files", ["path": root, "pattern": "*.swift"])) == "No matches found")
        let inSrc = try await tool(mcp, "search_files", ["path": root + "/src", "pattern": "*.swift"])
        #expect(text(inSrc) == root + "/src/a.swift")
        #expect(text(try await tool(mcp, "search_files", ["path": "files:/", "pattern": "*.none"])) == "No matches found")

        let info = try await tool(mcp, "get_file_info", ["path": root + "/src/deep/b.swift"])
        #expect(text(info).contains("size: 10") && text(info).contains("isFile: true"))
        #expect(structured(info)["isDirectory"] as? Bool == false)

        let allowed = try await tool(mcp, "list_allowed_directories")
        #expect(text(allowed).hasPrefix("Allowed directories:\n\(root)\n"))
        #expect(structured(allowed)["directories"] as? [String] == [root])
    }

    @Test func movesNeverOverwriteUnlessAskedAndCopiesKeepBoth() async throws {
        directory.make([user("a.txt"): "A", user("b.txt"): "B", user("Folder/inner.txt"): "I"])
        let mcp = try await server()
        let refused = try await tool(mcp, "move_file", ["source": root + "/a.txt", "destination": root + "/b.txt"])
        #expect(failed(refused) && text(refused).contains("already exists"))
        #expect(directory.contents(user("a.txt")) == "A" && directory.contents(user("b.txt")) == "B")
        // A folder at the destination is not a place to move into: the destination is the new path.
        #expect(failed(try await tool(mcp, "move_file", ["source": "a.txt", "destination": "Folder"])))
        let moved = try await tool(mcp, "move_file", ["source": "a.txt", "destination": "Folder/renamed.txt"])
        #expect(text(moved) == "Successfully moved a.txt to Folder/renamed.txt" || text(moved).contains("renamed.txt"))
        #expect(directory.contents(user("Folder/renamed.txt")) == "A" && !directory.exists(user("a.txt")))
        try await tool(mcp, "move_file", ["source": "b.txt", "destination": "Folder/renamed.txt", "conflict": "replace"])
        #expect(directory.contents(user("Folder/renamed.txt")) == "B")

        let copy = try await tool(mcp, "copy_file", ["source": "Folder", "destination": "Folder", "conflict": "keepBoth"])
        #expect(!failed(copy), "\(text(copy))")
        #expect(directory.contents(user("Folder (2)/inner.txt")) == "I")
        #expect(failed(try await tool(mcp, "copy_file", ["source": "Folder/inner.txt", "destination": "Folder/renamed.txt"])))
    }

    @Test func deletingIsSoftAndRestorable() async throws {
        directory.make([user("draft.md"): "keep me"])
        let mcp = try await server()
        let trashed = try await tool(mcp, "trash_file", ["path": root + "/draft.md"])
        let id = try #require(structured(trashed)["trashId"] as? String)
        #expect(!directory.exists(user("draft.md")))
        let listed = try await tool(mcp, "list_trash")
        #expect((structured(listed)["items"] as? [[String: Any]])?.first?["trashId"] as? String == id)
        directory.make([user("draft.md"): "in the way"])
        #expect(failed(try await tool(mcp, "restore_file", ["trashId": id])))
        let restored = try await tool(mcp, "restore_file", ["trashId": id, "conflict": "keepBoth"])
        #expect(!failed(restored))
        #expect(directory.contents(user("draft (2).md")) == "keep me" && directory.contents(user("draft.md")) == "in the way")
        // Every change went to the audit log as the MCP front end's.
        let audit = directory.contents("container/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        #expect(audit.contains(#""frontEnd":"mcp""#) && audit.contains(#""method":"trash""#) && audit.contains(#""method":"restore""#),
                "\(audit)")
    }

    @Test func mediaComesAsImagesAndResourcesAsFileURIs() async throws {
        let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!
        try FileManager.default.createDirectory(atPath: directory.url(user("")), withIntermediateDirectories: true)
        try png.write(to: URL(fileURLWithPath: directory.url(user("dot.png"))))
        directory.make([user("页.txt"): "中文内容"])
        let mcp = try await server()
        let media = try await tool(mcp, "read_media_file", ["path": root + "/dot.png"])
        let block = try #require((media["content"] as? [[String: Any]])?.first)
        #expect(block["type"] as? String == "image" && block["mimeType"] as? String == "image/png")
        #expect(block["data"] as? String == png.base64EncodedString())

        let templates = try #require(result(try await mcp.awaitCall("resources/templates/list"))?["resourceTemplates"] as? [[String: Any]])
        #expect((templates.first?["uriTemplate"] as? String)?.hasPrefix("file://") == true)
        let uri = URL(fileURLWithPath: root + "/页.txt").absoluteString
        let read = try #require(result(try await mcp.awaitCall("resources/read", ["uri": uri])))
        #expect((read["contents"] as? [[String: Any]])?.first?["text"] as? String == "中文内容")
        let missing = URL(fileURLWithPath: root + "/none.txt").absoluteString
        #expect(errorCode(try await mcp.awaitCall("resources/read", ["uri": missing])) == -32002)
        #expect(errorCode(try await mcp.awaitCall("resources/read", ["uri": missing, "_meta": Self.stateless])) == -32602)
        #expect(errorCode(try await mcp.awaitCall("resources/read", ["uri": "file:///etc/passwd"])) == -32002)
    }

    @Test func contentAndNameSearchesFindTextInEveryEncoding() async throws {
        directory.make([user("en.txt"): "alpha\nthe Needle here\nomega"])
        try writeChineseSamples(lineEnd: "\n")
        try Data([0, 1, 2, 0x6E, 0x65, 0x65, 0x64, 0x6C, 0x65, 0, 0xFF]).write(to: URL(fileURLWithPath: directory.url(user("bin.dat"))))
        let mcp = try await server()
        let english = try await tool(mcp, "search_file_contents", ["path": root, "query": "needle"])
        let matches = try #require(structured(english)["matches"] as? [[String: Any]])
        #expect(matches.count == 1 && matches[0]["line"] as? Int == 2 && matches[0]["path"] as? String == root + "/en.txt")
        #expect(structured(english)["filesSkipped"] as? Int == 1)  // the binary file
        let chinese = try await tool(mcp, "search_file_contents", ["path": "files:/", "query": "针"])
        let paths = Set((structured(chinese)["matches"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String })
        #expect(paths == ["files:/gb.txt", "files:/u16.txt"], "\(text(chinese))")
        let exact = try await tool(mcp, "search_file_contents", ["path": root, "query": "needle", "caseSensitive": true])
        #expect((structured(exact)["matches"] as? [Any])?.isEmpty == true)

        let named = try await tool(mcp, "find_files", ["query": "U16"])
        #expect((structured(named)["matches"] as? [[String: Any]])?.map { $0["name"] as? String } == ["u16.txt"])
    }

    // MARK: Errors

    @Test func protocolErrorsAreErrorsAndToolFailuresAreResults() async throws {
        let mcp = try await server(["--lang", "zh-Hans"])
        #expect(errorCode(try await mcp.awaitCall("tools/call", ["name": "delete_file", "arguments": [:]])) == -32602)
        #expect(errorCode(try await mcp.awaitCall("prompts/list")) == -32601)
        #expect(errorCode(try await mcp.awaitCall("tools/call", ["arguments": [:]])) == -32602)
        let badArgument = try await tool(mcp, "read_text_file", ["path": 42])
        #expect(failed(badArgument) && text(badArgument).contains("参数无效") && text(badArgument).contains("“path”"))
        let missing = try await tool(mcp, "get_file_info", ["path": "files:/none"])
        #expect(failed(missing) && text(missing).contains("不存在"))
        mcp.sendRaw(Data("{not json\n".utf8))
        #expect(errorCode(try await mcp.awaitMessage("a parse error") { message in
            let object = message as? [String: Any]
            return errorCode(object ?? [:]) == -32700 ? object : nil
        }) == -32700)
        // A message over the limit is refused without being kept, and the conversation goes on.
        let huge = #"{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":""# + String(repeating: "x", count: 17 << 20) + "\"}}\n"
        mcp.sendRaw(Data(huge.utf8))
        #expect(errorCode(try await mcp.awaitMessage("the refusal") { message in
            let object = message as? [String: Any]
            return errorCode(object ?? [:]) == -32600 ? object : nil
        }) == -32600)
        #expect(result(try await mcp.awaitCall("ping")) != nil)
    }

    // MARK: Progress and cancellation

    @Test func aCopyReportsProgressAndACancelledOneLeavesNothing() async throws {
        directory.make([user("small.txt"): "s"])
        try directory.makeSparseFile(user("big.bin"), gigabytes: 1)
        let mcp = try await server()
        let started = ContinuousClock.now
        let copied = try await mcp.awaitCall("tools/call", ["name": "copy_file", "_meta": ["progressToken": "p1"],
                                                            "arguments": ["source": "big.bin", "destination": "copy.bin"]],
                                             timeout: 120)
        let copyTime = ContinuousClock.now - started
        #expect(result(copied)?["isError"] as? Bool == false)
        let reports = mcp.notifications("notifications/progress").filter { $0["progressToken"] as? String == "p1" }
        #expect(!reports.isEmpty)
        let values = reports.compactMap { $0["progress"] as? Int }
        #expect(values == values.sorted() && values.last == 1 << 30 && reports.last?["total"] as? Int == 1 << 30)

        // The cancel goes right behind the request, so it reaches the server while the copy
        // runs (or before it starts) however slowly this test is scheduled.
        let id = mcp.sendRequest("tools/call", ["name": "copy_file", "_meta": ["progressToken": "p2"],
                                                "arguments": ["source": "big.bin", "destination": "cancelled.bin"]])
        mcp.notify("notifications/cancelled", ["requestId": id, "reason": "test"])
        // Later requests are answered; the cancelled one never is, and left nothing behind.
        #expect(result(try await mcp.awaitCall("ping")) != nil)
        // Twice as long as the whole first copy took: an uncancelled copy would have answered.
        try await Task.sleep(for: copyTime * 2 + .milliseconds(500))
        let answered = mcp.received.contains { ($0 as? [String: Any]).map { RPCClient.sameID($0["id"], id) } ?? false }
        #expect(!answered)
        #expect(!directory.exists(user("cancelled.bin")))
        #expect(directory.names(user("")).allSatisfy { !$0.hasPrefix(".coffer") }, "\(directory.names(user("")))")
    }

    // MARK: Host folders

    @Test func hostFoldersComeFromAllowHostOrTheClientsRoots() async throws {
        directory.make(["host/in/report.txt": "from the host", "elsewhere/secret.txt": "no"])
        let allowed = try await server(["--allow-host", directory.url("host")])
        let imported = try await tool(allowed, "import_files", ["hostPaths": [directory.url("host/in/report.txt")]])
        #expect(!failed(imported), "\(text(imported))")
        #expect(directory.contents(user("Import/report.txt")) == "from the host")
        // What a folder's import leaves out (a link) is said, in the text and the structured result.
        directory.make(["host/Album/a.jpg": "a"])
        directory.link("host/Album/out", to: "/etc/passwd")
        let album = try await tool(allowed, "import_files", ["hostPaths": [directory.url("host/Album")]])
        #expect(!failed(album) && text(album).contains("left out") && text(album).contains("Album/out"), "\(text(album))")
        let skipped = ((structured(album)["results"] as? [[String: Any]])?.first?["skipped"] as? [[String: Any]]) ?? []
        #expect(skipped.count == 1 && (skipped.first?["hostPath"] as? String)?.hasSuffix("/Album/out") == true, "\(skipped)")
        let refused = try await tool(allowed, "import_files", ["hostPaths": [directory.url("elsewhere/secret.txt")]])
        #expect(text(refused).contains("may not use"))
        let exported = try await tool(allowed, "export_file", ["path": root + "/Import/report.txt", "hostDirectory": directory.url("host")])
        #expect(!failed(exported) && directory.contents("host/report.txt") == "from the host")
        // The container is never a host folder, whatever is allowed.
        let inside = try await tool(allowed, "import_files", ["hostPaths": [root + "/Import/report.txt"]])
        #expect(text(inside).contains("may not use"))

        // A client that offers roots: asked for them after `initialized`, and they count.
        let rooted = try await server(capabilities: ["roots": ["listChanged": true]])
        let ask = try await rooted.awaitMessage("roots/list") { message in
            let object = message as? [String: Any]
            return object?["method"] as? String == "roots/list" ? object : nil
        }
        rooted.send(["jsonrpc": "2.0", "id": ask["id"]!,
                     "result": ["roots": [["uri": URL(fileURLWithPath: directory.url("elsewhere")).absoluteString, "name": "e"]]]])
        var attempt: [String: Any] = [:]
        for _ in 0..<100 {
            attempt = try await tool(rooted, "import_files", ["hostPaths": [directory.url("elsewhere/secret.txt")]])
            if !failed(attempt) && !text(attempt).contains("may not use") { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(text(attempt).contains("secret.txt →"), "\(text(attempt))")
    }

    // MARK: Confinement

    @Test func nothingOutsideTheRootIsReadOrWritten() async throws {
        directory.make([user("inside.txt"): "in", "outside/secret.txt": "SECRET", "container/Documents/UserFiles-evil/x.txt": "EVIL"])
        directory.link(user("out-link"), to: directory.url("outside"))
        directory.link(user("file-link"), to: directory.url("outside/secret.txt"))
        directory.link(user("dangling"), to: directory.url("outside/nothing-here"))
        try #require(mkfifo(directory.url(user("pipe")), 0o644) == 0)
        // A device (/dev/null's numbers) where the machine lets this process make one (root).
        let device = mknod(directory.url(user("null-device")), S_IFCHR | 0o644, dev_t(1 << 8 | 3)) == 0
        let mcp = try await server()
        let attempts: [[String: Any]] = [
            ["path": root + "/../../outside/secret.txt"],
            ["path": "files:/../outside/secret.txt"],
            ["path": root + "-evil/x.txt"],
            ["path": directory.url("outside/secret.txt")],
            ["path": root + "/out-link/secret.txt"],
            ["path": root + "/file-link"],
            ["path": "dangling"],
            ["path": "pipe"],
            ["path": "/etc/passwd"],
        ] + (device ? [["path": "null-device"]] : [])
        for arguments in attempts {
            let read = try await tool(mcp, "read_text_file", arguments)
            #expect(failed(read), "\(arguments)")
            #expect(!text(read).contains("SECRET") && !text(read).contains("EVIL") && !text(read).contains("root:"), "\(arguments)")
        }
        for path in [root + "/out-link/planted.txt", root + "/../../outside/planted.txt", root + "-evil/planted.txt"] {
            #expect(failed(try await tool(mcp, "write_file", ["path": path, "content": "planted"])), "\(path)")
        }
        // Writing through a link that leads out is refused, dangling or not, naming nothing outside;
        // the link stays a link and nothing appears where it pointed.
        for path in ["dangling", "file-link"] {
            let planted = try await tool(mcp, "write_file", ["path": path, "content": "planted"])
            #expect(failed(planted) && !text(planted).contains(directory.url("outside")), "\(text(planted))")
            var info = stat()
            #expect(lstat(directory.url(user(path)), &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
        }
        #expect(!directory.exists("outside/nothing-here"))
        #expect(directory.contents("outside/secret.txt") == "SECRET")
        #expect(failed(try await tool(mcp, "create_directory", ["path": root + "/out-link/made"])))
        #expect(failed(try await tool(mcp, "copy_file", ["source": "file-link", "destination": "stolen.txt"])) ||
                directory.contents(user("stolen.txt")) != "SECRET")
        #expect(failed(try await tool(mcp, "move_file", ["source": "inside.txt", "destination": root + "/out-link/moved.txt"])))
        #expect(directory.names("outside") == ["secret.txt"])
        #expect(directory.names("container/Documents/UserFiles-evil") == ["x.txt"])
        #expect(directory.contents(user("inside.txt")) == "in")
        // A tree and a search do not go through the link either.
        let tree = text(try await tool(mcp, "directory_tree", ["path": root]))
        #expect(!tree.contains("secret.txt"))
        let search = try await tool(mcp, "search_file_contents", ["path": root, "query": "SECRET"])
        #expect((structured(search)["matches"] as? [Any])?.isEmpty == true)
    }

    /// Links as the reference server treats them (it acts on `realpath`): one inside the root that
    /// stays inside leads to its target for info, reads and writes; one that leads out is refused
    /// for all three, and the refusal names only the path sent.
    @Test func linksInsideAreFollowedAndLinksOutAreRefused() async throws {
        directory.make([user("real/target.txt"): "T", "outside/secret.txt": "SECRET"])
        chmod(directory.url(user("real/target.txt")), 0o640)
        directory.link(user("alias.txt"), to: "real/target.txt")
        directory.link(user("abs-alias"), to: directory.url(user("real")))
        directory.link(user("out"), to: directory.url("outside/secret.txt"))
        directory.link(user("up"), to: "../../../outside")
        let mcp = try await server()
        let info = try await tool(mcp, "get_file_info", ["path": root + "/alias.txt"])
        #expect(!failed(info) && structured(info)["size"] as? Int == 1 && structured(info)["isFile"] as? Bool == true)
        #expect(structured(info)["linkTarget"] == nil && structured(info)["permissions"] as? String == "640")
        #expect(text(info).contains("permissions: 640") && structured(info)["accessed"] is String)
        #expect(text(try await tool(mcp, "read_text_file", ["path": root + "/abs-alias/target.txt"])) == "T")
        _ = try await tool(mcp, "write_file", ["path": root + "/alias.txt", "content": "new"])
        #expect(directory.contents(user("real/target.txt")) == "new")
        var status = stat()
        #expect(lstat(directory.url(user("alias.txt")), &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK, "the link stays")
        for path in [root + "/out", root + "/up/secret.txt", "files:/up"] {
            for (name, arguments) in [("get_file_info", ["path": path]), ("read_text_file", ["path": path]),
                                      ("write_file", ["path": path, "content": "planted"])] as [(String, [String: Any])] {
                let answer = try await tool(mcp, name, arguments)
                #expect(failed(answer), "\(name) \(path)")
                #expect(!text(answer).contains(directory.url("outside")) && !text(answer).contains("SECRET"), "\(text(answer))")
            }
        }
        #expect(directory.contents("outside/secret.txt") == "SECRET" && directory.names("outside") == ["secret.txt"])
        // trash_file of a link trashes the link itself, not what it points to.
        let trashed = try await tool(mcp, "trash_file", ["path": root + "/alias.txt"])
        #expect(!failed(trashed) && !directory.exists(user("alias.txt")), "\(text(trashed))")
        #expect(directory.contents(user("real/target.txt")) == "new")
    }

    /// A partial answer says so in the text, not only in `structuredContent`: a client that
    /// passes on the text must not read it as the whole.
    @Test func aTruncatedSearchSaysSoInItsText() async throws {
        let folder = directory.url(user("many"))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 0..<20_050 { _ = FileManager.default.createFile(atPath: "\(folder)/f\(index).txt", contents: nil) }
        let mcp = try await server()
        // search_files goes through the whole tree (no match in the first 20,000 is no false
        // "No matches found"), and reports at most 20,000 matches, saying how many there were.
        // (Walks of 20,050 files, which take a loaded CI machine more than the usual 30 s.)
        let last = try await tool(mcp, "search_files", ["path": root, "pattern": "**/f20049.txt"], timeout: 120)
        #expect(text(last) == folder + "/f20049.txt" && structured(last)["truncated"] as? Bool == false, "\(text(last))")
        let search = try await tool(mcp, "search_files", ["path": root, "pattern": "**/*.txt"], timeout: 120)
        #expect(text(search).hasSuffix("Showing 20,000 of 20,050 matches. Narrow the pattern or use find_files."))
        #expect(structured(search)["truncated"] as? Bool == true && (structured(search)["matches"] as? [Any])?.count == 20_000)
        let tree = try await tool(mcp, "directory_tree", ["path": root], timeout: 120)
        #expect(text(tree).contains("Stopped after 20,000 items"))
    }

    /// Answers name absolute paths whatever `--container` was: a relative one is made absolute.
    @Test func aRelativeContainerStillAnswersAbsolutePaths() async throws {
        directory.make([user("notes/a.md"): "a"])
        let mcp = try RPCProcess(container: "container", command: "mcp", launcher: ["/usr/bin/env", "-C", directory.url()])
        _ = try await mcp.awaitCall("initialize", ["protocolVersion": "2025-11-25", "capabilities": [:] as [String: Any],
                                                   "clientInfo": ["name": "tests", "version": "1"]])
        mcp.notify("notifications/initialized")
        let allowed = try await tool(mcp, "list_allowed_directories")
        let real = URL(fileURLWithPath: root).standardizedFileURL.path
        #expect((structured(allowed)["directories"] as? [String])?.allSatisfy { $0.hasPrefix("/") && $0.hasSuffix("container/Documents/UserFiles") } == true)
        let found = try await tool(mcp, "search_files", ["path": (structured(allowed)["directories"] as? [String])?.first ?? "", "pattern": "**/*.md"])
        let path = text(found)
        #expect(path.hasPrefix("/") && path.hasSuffix("/notes/a.md"), "\(path)")
        #expect(text(try await tool(mcp, "read_text_file", ["path": path])) == "a")
        _ = real
    }

    /// `restore_file` by the path an item was trashed from (the latest from there), as a model
    /// that trashed a path calls it, and by its trash id.
    @Test func restoreFileTakesThePathItWasTrashedFrom() async throws {
        directory.make([user("draft.md"): "one"])
        let mcp = try await server()
        _ = try await tool(mcp, "trash_file", ["path": root + "/draft.md"])
        directory.make([user("draft.md"): "two"])
        _ = try await tool(mcp, "trash_file", ["path": root + "/draft.md"])
        let restored = try await tool(mcp, "restore_file", ["path": root + "/draft.md"])
        #expect(!failed(restored) && directory.contents(user("draft.md")) == "two", "\(text(restored))")
        _ = try await tool(mcp, "trash_file", ["path": "files:/draft.md"])
        let again = try await tool(mcp, "restore_file", ["trashId": root + "/draft.md"])
        #expect(!failed(again) && directory.contents(user("draft.md")) == "two", "\(text(again))")
        let nothing = try await tool(mcp, "restore_file", ["path": root + "/never-there.md"])
        #expect(failed(nothing) && text(nothing).contains("never-there.md"), "\(text(nothing))")
    }

    /// A folder swapped for a link to outside while requests run: no read ever returns what
    /// is outside, and no write lands there.
    @Test func aLinkSwappedInDuringRequestsLeadsNowhere() async throws {
        directory.make([user("box/file.txt"): "inside", "outside/file.txt": "OUTSIDE"])
        let mcp = try await server()
        let box = directory.url(user("box")), parked = directory.url(user("parked")), outside = directory.url("outside")
        // On a thread of its own (not one of the test pool's few), until the requests are done.
        let stop = Mutex(false), stopped = DispatchSemaphore(value: 0)
        Thread {
            var linked = false
            while !stop.withLock({ $0 }) {
                if linked {
                    unlink(box); rename(parked, box)
                } else {
                    rename(box, parked); symlink(outside, box)
                }
                linked.toggle()
                usleep(300)
            }
            if linked { unlink(box); rename(parked, box) }
            stopped.signal()
        }.start()
        for index in 0..<150 {
            let read = try await tool(mcp, "read_text_file", ["path": root + "/box/file.txt"])
            #expect(!text(read).contains("OUTSIDE"))
            _ = try await tool(mcp, "write_file", ["path": root + "/box/w\(index).txt", "content": "w"])
        }
        stop.withLock { $0 = true }
        try await offPool { stopped.wait() }
        #expect(directory.names("outside") == ["file.txt"])
    }

    // MARK: Downloads

    @Test func downloadFileFetchesIntoDownloadAndNeverReplaces() async throws {
        let web = try TransferServer()
        let mcp = try await server()
        let first = try await tool(mcp, "download_file", ["url": web.url("/named")])
        #expect(!failed(first), "\(text(first))")
        #expect(text(first) == "Downloaded to \(root)/Download/年度报告.txt")
        let second = try await tool(mcp, "download_file", ["url": web.url("/named"), "destination": "files:/"])
        #expect(((structured(second)["file"] as? [String: Any])?["path"] as? String) == "files:/年度报告.txt")
        #expect(directory.contents(user("Download/年度报告.txt")) == "named content")
        let missing = try await tool(mcp, "download_file", ["url": web.url("/missing")])
        #expect(failed(missing) && text(missing).contains("404"))
        #expect(failed(try await tool(mcp, "download_file", ["url": "file:///etc/passwd"])))
    }
}
