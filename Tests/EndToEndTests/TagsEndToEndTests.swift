import CofferTestSupport
import Foundation
import Testing

/// Tags (the `user.xdg.tags` attribute, issue 35): set from the REPL, RPC and MCP, shown by
/// `info` and `tags`, and kept — with every other `user.` attribute — by copies, moves, the
/// trash, exports and imports (checked with `getfattr`, another program's reading).
@Suite(.serialized, .ownsProcesses)
struct TagsEndToEndTests {
    let directory = TemporaryDirectory("e2e-tags")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { directory.url("container/Documents/UserFiles/" + relative) }
    func host(_ relative: String) -> String { directory.url("host/" + relative) }

    init() throws {
        directory.make(["host/.keep": ""])
        #expect(try CofferBinary.run(["--container", container, "-c", "mkdir Docs Out"]).status == 0)
        directory.make(["container/Documents/UserFiles/Docs/report.txt": "r", "container/Documents/UserFiles/Docs/plan.md": "p"])
    }

    func coffer(_ commands: String) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands])
    }

    /// `getfattr`'s value of `name` on `path`, `nil` when it has none.
    func attribute(_ name: String, of path: String) throws -> String? {
        let result = try TestProcess.run(["getfattr", "--only-values", "-n", name, path], timeout: 60)
        return result.status == 0 ? result.outputText : nil
    }

    @Test func theREPLTagsAndEveryCopyKeepsTheTags() throws {
        let tagged = try coffer("tag Docs/report.txt Docs +work +urgent; tag Docs/report.txt -urgent; tag Docs/plan.md +work")
        #expect(tagged.status == 0, "\(tagged.errors)")
        #expect(tagged.output == "files:/Docs/report.txt: work, urgent\nfiles:/Docs: work, urgent\nfiles:/Docs/report.txt: work\nfiles:/Docs/plan.md: work\n")
        #expect(try attribute("user.xdg.tags", of: user("Docs/report.txt")) == "work")
        #expect(try coffer("info Docs/report.txt").output.contains("Tags:        work"))
        #expect(try coffer("tags").output == "work    3\nurgent  1\n")

        // Another program's attributes travel too.
        #expect(TestProcess.launchedAndWaited(["setfattr", "-n", "user.xdg.comment", "-v", "keep me", user("Docs/report.txt")]) == 0)
        #expect(try coffer("cp -r Docs Copy; mv Copy/report.txt Out/moved.txt; rm Out/moved.txt; restore moved.txt").status == 0)
        for path in [user("Copy"), user("Copy/plan.md"), user("Out/moved.txt")] {
            #expect(try attribute("user.xdg.tags", of: path) != nil, "\(path) keeps its tags")
        }
        #expect(try attribute("user.xdg.comment", of: user("Out/moved.txt")) == "keep me")
        #expect(try attribute("user.xdg.tags", of: user("Copy")) == "work,urgent")

        // Out to the host and back in.
        #expect(try coffer("export Docs '\(host(""))'").status == 0)
        #expect(try attribute("user.xdg.tags", of: host("Docs/report.txt")) == "work")
        #expect(try attribute("user.xdg.comment", of: host("Docs/report.txt")) == "keep me")
        #expect(try attribute("user.xdg.tags", of: host("Docs")) == "work,urgent")
        #expect(try coffer("import --into Out '\(host("Docs/report.txt"))' '\(host("Docs"))'").status == 0)
        #expect(try attribute("user.xdg.tags", of: user("Out/report.txt")) == "work")
        #expect(try attribute("user.xdg.tags", of: user("Out/Docs")) == "work,urgent", "a folder imported whole keeps its own")
        #expect(try attribute("user.xdg.comment", of: user("Out/Docs/report.txt")) == "keep me")

        let refused = try coffer("tag Docs/plan.md +a,b")
        #expect(refused.status == 1 && refused.errors.contains("a tag is a word or words without commas"))
        #expect(try coffer("tag Docs/missing.txt +x").status == 1)
    }

    @Test func rpcAndMCPSetTheSameTags() async throws {
        let rpc = try RPCProcess(container: container)
        defer { rpc.closeInput() }
        _ = try await rpc.awaitCall("initialize", ["locale": "en"])
        let set = try #require(result(try await rpc.awaitCall("files/tags/set", ["paths": ["/Docs/plan.md", "/Docs/nothing"],
                                                                                 "add": ["idea", "2026"]])))
        let items = try #require(set["results"] as? [[String: Any]])
        #expect(items.first?["tags"] as? [String] == ["idea", "2026"])
        #expect((items.last?["error"] as? [String: Any])?["kind"] as? String == "noSuchFile")
        let got = try #require(result(try await rpc.awaitCall("files/tags/get", ["path": "/Docs/plan.md"])))
        #expect(got["tags"] as? [String] == ["idea", "2026"])
        let listed = try #require(result(try await rpc.awaitCall("files/tags/list")))
        #expect((listed["tags"] as? [[String: Any]])?.compactMap { $0["tag"] as? String }.sorted() == ["2026", "idea"])

        let mcp = try RPCProcess(container: container, command: "mcp")
        defer { mcp.closeInput() }
        _ = try await mcp.awaitCall("initialize", ["protocolVersion": "2025-11-25", "capabilities": [:]])
        let tagged = try #require(result(try await mcp.awaitCall("tools/call", [
            "name": "tag_files", "arguments": ["paths": ["files:/Docs/plan.md"], "remove": ["idea"], "add": ["ready"]]])))
        let text = ((tagged["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
        #expect(text == "files:/Docs/plan.md: 2026, ready", "\(tagged)")
        #expect(try attribute("user.xdg.tags", of: user("Docs/plan.md")) == "2026,ready")
    }

    /// A file system without user attributes (ramfs, mounted in a namespace of its own, which
    /// needs no privilege): an export there keeps the file and says which attributes it could
    /// not keep — in the REPL, in RPC's `warnings`, in MCP's text — and an import from there
    /// into a tagged tree does not pretend either.
    @Test func aFileSystemWithoutUserAttributesReportsTheLoss() throws {
        guard TestProcess.launchedAndWaited(["unshare", "-rm", "true"]) == 0 else {
            Issue.record("unshare -rm is not available: the loss cannot be shown on a real file system here")
            return
        }
        #expect(try coffer("tag Docs/report.txt +work").status == 0)
        let ramfs = directory.url("ramfs")
        let out = directory.url("out")
        try FileManager.default.createDirectory(atPath: ramfs, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let rpcLines = [
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"locale":"en"}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"host/export","params":{"path":"/Docs/report.txt","hostDirectory":"RAMFS/rpc"}}"#,
        ]
        let mcpLines = [
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"export_file","arguments":{"path":"files:/Docs/report.txt","hostDirectory":"RAMFS/mcp"}}}"#,
        ]
        let script = """
            set -e
            mount -t ramfs ramfs "$RAMFS"
            mkdir "$RAMFS/repl" "$RAMFS/rpc" "$RAMFS/mcp"
            "$COFFER" --container "$CONTAINER" --lang en -c "export Docs/report.txt '$RAMFS/repl'" >"$OUT/repl.out" 2>"$OUT/repl.err"
            printf '%s\n' \(rpcLines.map { "'\($0)'" }.joined(separator: " ")) | sed "s#RAMFS#$RAMFS#" \
                | "$COFFER" --container "$CONTAINER" rpc --allow-host "$RAMFS" >"$OUT/rpc.out"
            printf '%s\n' \(mcpLines.map { "'\($0)'" }.joined(separator: " ")) | sed "s#RAMFS#$RAMFS#" \
                | "$COFFER" --container "$CONTAINER" mcp --allow-host "$RAMFS" >"$OUT/mcp.out"
            ls "$RAMFS/repl" "$RAMFS/rpc" "$RAMFS/mcp" >"$OUT/ls.out"
            """
        let process = try TestProcess.run(["unshare", "-rm", "sh", "-c", script],
                                          environment: ProcessInfo.processInfo.environment.merging([
                                              "RAMFS": ramfs, "OUT": out, "CONTAINER": container, "COFFER": CofferBinary.url.path,
                                          ]) { $1 }, timeout: 180)
        func read(_ name: String) -> String { (try? String(contentsOfFile: out + "/" + name, encoding: .utf8)) ?? "" }
        #expect(process.status == 0, "\(read("repl.err"))")
        #expect(read("ls.out").components(separatedBy: "report.txt").count == 4, "every front end exported the file: \(read("ls.out"))")
        #expect(read("repl.err").contains("warning: “files:/Docs/report.txt”: the copy did not keep user.xdg.tags: the destination keeps no extended attributes"),
                "\(read("repl.err"))")
        let rpcAnswer = read("rpc.out").split(separator: "\n").last.map(String.init) ?? ""
        let rpcResult = (try? JSONSerialization.jsonObject(with: Data(rpcAnswer.utf8))) as? [String: Any]
        let warnings = (rpcResult?["result"] as? [String: Any])?["warnings"] as? [[String: Any]]
        #expect(warnings?.first?["kind"] as? String == "attributesNotKept", "\(rpcAnswer)")
        #expect(warnings?.first?["attributes"] as? [String] == ["user.xdg.tags"])
        #expect(warnings?.first?["reason"] as? String == "unsupported")
        #expect(((rpcResult?["result"] as? [String: Any])?["hostPath"] as? String)?.hasSuffix("rpc/report.txt") == true)
        #expect(read("mcp.out").contains("Warning: “files:/Docs/report.txt”: the copy did not keep user.xdg.tags"), "\(read("mcp.out"))")
    }
}

extension TestProcess {
    /// Runs a program found on `PATH` and returns its exit status (-1 when it cannot run).
    static func launchedAndWaited(_ arguments: [String]) -> Int32 {
        (try? run(arguments, timeout: 120))?.status ?? -1
    }
}
