import CofferTestSupport
import FileService
import Foundation
import Testing

/// One table of front-end defaults (issue 31): the same copy onto a taken name, with no
/// conflict argument, through the REPL (piped), RPC and MCP — each answers as its row of
/// `FrontEndDefaults` says, and each writes the same audit entry but for `frontEnd` and what
/// became of it. The web page's socket is checked the same way by `.ci/web_check.py` (a
/// WebSocket client, asked and not asked), and in-process by `ClientQuestionsTests`.
@Suite(.ownsProcesses) struct FrontEndDefaultsEndToEndTests {
    let directory = TemporaryDirectory("e2e-defaults")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }

    func auditLines() -> [[String: Any]] {
        (directory.contents("container/Library/Application Support/AppData/logs/audit.jsonl") ?? "")
            .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func aCopyOntoATakenNameAnswersByTheTable() async throws {
        directory.make([user("a.txt"): "new", user("Docs/a.txt"): "old"])
        // The table itself: the REPL asks (a script cannot answer: it fails), RPC keeps both, MCP fails.
        #expect(FrontEndDefaults.standard(for: "repl").conflicts["copy"] == .ask)
        #expect(FrontEndDefaults.standard(for: "rpc").conflicts["copy"] == nil && CopyItem.defaultConflict == .keepBoth)
        #expect(FrontEndDefaults.standard(for: "mcp").conflicts["copy"] == .fail)
        #expect(FrontEndDefaults.standard(for: "web").conflicts["copy"] == .ask)

        let piped = try await CofferBinary.running(["--container", container, "--lang", "en"], input: "cp a.txt Docs\n")
        #expect(piped.status != 0 && piped.errors.contains("already exists"), "\(piped.errors)")

        let rpc = try RPCProcess(container: container)
        try rpc.initialize()
        let copied = try #require(result(try rpc.call("files/copy", ["path": "/a.txt", "toDirectory": "/Docs"])))
        #expect(copied["path"] as? String == "files:/Docs/a (2).txt")
        rpc.closeInput()
        _ = try rpc.waitForExit()

        let mcp = try await RPCProcess.mcp(container: container)
        let refused = try #require(result(try await mcp.awaitCall("tools/call", ["name": "copy_file", "arguments": [
            "source": "files:/a.txt", "destination": "files:/Docs/a.txt"]])))
        #expect(refused["isError"] as? Bool == true)
        mcp.closeInput()
        _ = try mcp.waitForExit()

        #expect(directory.contents(user("Docs/a.txt")) == "old")
        let copies = auditLines().filter { $0["method"] as? String == "copy" }
        let seen = copies.map { "\($0["frontEnd"] ?? "") \($0["outcome"] ?? "") \(($0["paths"] as? [String]) ?? [])" }
        #expect(seen == [
            "repl fileExists [\"files:/a.txt\", \"files:/Docs\"]",
            "rpc ok [\"files:/a.txt\", \"files:/Docs/a (2).txt\"]",
            "mcp fileExists [\"files:/a.txt\", \"files:/Docs/a.txt\"]",
        ], "\(seen)")
    }
}
