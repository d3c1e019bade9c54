import CofferTestSupport
import Foundation
import Testing

/// `find` narrowed by type, tag, date and size (issue 35), on a tree with known dates, sizes
/// and types: the index and the walk give the same answers, a live index hears of tags set by
/// another program, and RPC and MCP take the same words.
@Suite(.serialized, .ownsProcesses)
struct SearchFiltersEndToEndTests {
    let directory = TemporaryDirectory("e2e-filters")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { directory.url("container/Documents/UserFiles/" + relative) }

    init() throws {
        #expect(try CofferBinary.run(["--container", container, "-c", "mkdir Photos Docs"]).status == 0)
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]).write(to: URL(fileURLWithPath: user("Photos/beach.png")))
        try Data([0xFF, 0xD8, 0xFF, 0xE0]).write(to: URL(fileURLWithPath: user("Photos/old photo.jpg")))
        try Data(count: 3 << 20).write(to: URL(fileURLWithPath: user("Docs/big report.pdf")))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: user("Docs/notes.txt")))
        try Data("2019".utf8).write(to: URL(fileURLWithPath: user("Docs/old report.txt")))
        for (file, date) in [("Photos/old photo.jpg", "2019-06-01 12:00"), ("Docs/old report.txt", "2019-03-01 12:00")] {
            #expect(TestProcess.launchedAndWaited(["touch", "-d", date, user(file)]) == 0)
        }
        #expect(try coffer("tag Docs/notes.txt 'Docs/big report.pdf' +work; tag Photos/beach.png +holiday").status == 0)
    }

    func coffer(_ commands: String) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands])
    }

    /// The paths `find ARGUMENTS` prints, by the index and by the walk (which must agree).
    func find(_ arguments: String) throws -> [String] {
        let indexed = try coffer("reindex; find \(arguments)")
        let walked = try coffer("find \(arguments) --walk")
        #expect(indexed.status == 0 && walked.status == 0, "\(indexed.errors) \(walked.errors)")
        let byIndex = indexed.output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("Search index:") }
        let byWalk = walked.output.split(separator: "\n").map(String.init)
        #expect(byIndex == byWalk, "find \(arguments): index \(byIndex), walk \(byWalk)")
        return byWalk
    }

    @Test func filtersNarrowTheSameWayByIndexAndByWalk() throws {
        #expect(try find("'*' --type public.image") == ["files:/Photos/beach.png", "files:/Photos/old photo.jpg"])
        #expect(try find("'*' --tag work") == ["files:/Docs/big report.pdf", "files:/Docs/notes.txt"])
        #expect(try find("report --older 2020-01-01") == ["files:/Docs/old report.txt"])
        #expect(try find("'*' --newer 1d --larger 1M") == ["files:/Docs/big report.pdf"])
        #expect(try find("'*' --smaller 6 --newer 2d") == ["files:/Docs/notes.txt"])
        #expect(try find("'*' --type public.image --older 2020-01-01 Photos") == ["files:/Photos/old photo.jpg"])
        #expect(try find("'*' --tag work,holiday").isEmpty)
        // Sorted instead of the walk order: largest first, newest first.
        let bySize = try coffer("find '*' Docs --sort size").output.split(separator: "\n").map(String.init)
        #expect(bySize == ["files:/Docs/big report.pdf", "files:/Docs/notes.txt", "files:/Docs/old report.txt"])
        let byDate = try coffer("find '*' Photos --sort date").output.split(separator: "\n").map(String.init)
        #expect(byDate == ["files:/Photos/beach.png", "files:/Photos/old photo.jpg"])
        let wrong = try coffer("find '*' --larger lots")
        #expect(wrong.status == 1 && wrong.errors.contains("is not a size"))
    }

    @Test func rpcAndMCPTakeTheSameFilters() async throws {
        let rpc = try RPCProcess(container: container)
        defer { rpc.closeInput() }
        _ = try await rpc.awaitCall("initialize", ["locale": "en"])
        let answer = try #require(result(try await rpc.awaitCall("files/search", [
            "query": "*", "tags": ["work"], "larger": 1024, "sort": "size"])))
        #expect((answer["matches"] as? [[String: Any]])?.compactMap { $0["path"] as? String } == ["files:/Docs/big report.pdf"])
        let older = try #require(result(try await rpc.awaitCall("files/search", ["query": "old", "older": "2020-01-01",
                                                                                 "sort": "modified", "descending": false])))
        #expect((older["matches"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["old report.txt", "old photo.jpg"])
        // Another program tags a file while the server runs: its watch keeps the index's rows current.
        #expect(TestProcess.launchedAndWaited(["setfattr", "-n", "user.xdg.tags", "-v", "later", user("Photos/old photo.jpg")]) == 0)
        var later: [String] = []
        for _ in 0..<50 where later.isEmpty {
            let found = try #require(result(try await rpc.awaitCall("files/search", ["query": "*", "tags": ["later"]])))
            later = (found["matches"] as? [[String: Any]])?.compactMap { $0["path"] as? String } ?? []
            if later.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(later == ["files:/Photos/old photo.jpg"])

        let mcp = try RPCProcess(container: container, command: "mcp")
        defer { mcp.closeInput() }
        _ = try await mcp.awaitCall("initialize", ["protocolVersion": "2025-11-25", "capabilities": [:]])
        let found = try #require(result(try await mcp.awaitCall("tools/call", [
            "name": "find_files", "arguments": ["query": "*", "newer": "1d", "smaller": "1K", "tags": ["work"]]])))
        let text = ((found["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
        #expect(text.hasSuffix("/Docs/notes.txt") && !text.contains("\n"), "\(text)")
    }
}
