import CofferTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new user met trying Coffer with the release build (issue 48): each test failed before
/// its fix.
@Suite(.ownsProcesses) struct NewcomerEndToEndTests {
    let directory = TemporaryDirectory("e2e-newcomer")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { directory.url("container/Documents/UserFiles/" + relative) }

    func coffer(_ commands: String, input: String = "", environment: [String: String] = [:],
                launcher: [String] = [], timeout: Double = 180) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], input: input,
                             environment: environment, launcher: launcher, timeout: timeout)
    }

    /// `coffer mcp` on the container, through the handshake.
    func mcp(_ arguments: [String] = []) async throws -> RPCProcess {
        try await RPCProcess.mcp(container: container, arguments: arguments)
    }

    func toolText(_ answer: [String: Any]) -> String {
        (((answer["result"] as? [String: Any])?["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
    }

    func toolFailed(_ answer: [String: Any]) -> Bool { (answer["result"] as? [String: Any])?["isError"] as? Bool == true }

    /// Peak resident memory of `pid` so far, in KiB (`VmHWM`).
    static func peakMemory(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(whereSeparator: \.isWhitespace)[1])
    }

    // MARK: 1. Patterns at a bounded cost

    @Test func aHugeBraceRangeIsAnsweredAtOnceInLittleMemory() async throws {
        _ = try coffer("mkdir D")
        directory.make(["container/Documents/UserFiles/D/17": "", "container/Documents/UserFiles/D/notes.txt": ""])
        let mcp = try await mcp()
        let before = try #require(Self.peakMemory(of: mcp.pid))
        let began = ContinuousClock.now
        let found = try await mcp.awaitCall("tools/call", ["name": "search_files",
                                                           "arguments": ["path": "D", "pattern": "{1..99999999}"]])
        // A bound on a runaway (it took 203 s of CPU and 6 GB), not a timing.
        #expect(ContinuousClock.now - began < .seconds(10))
        #expect(toolText(found).hasSuffix("/D/17"), "\(found)")
        let excluded = try await mcp.awaitCall("tools/call", ["name": "search_files",
                                                              "arguments": ["path": "D", "pattern": "*",
                                                                            "excludePatterns": ["{1..99999999}"]]])
        #expect(toolText(excluded).hasSuffix("/D/notes.txt") && !toolText(excluded).contains("/D/17"), "\(excluded)")
        let grown = try #require(Self.peakMemory(of: mcp.pid)) - before
        #expect(grown < 50 << 10, "the server grew by \(grown) KiB")
        // Braces that cut the path into segments are expanded, up to a bound: past it, an error
        // the model can read.
        let huge = String(repeating: "{a/1,b/2}", count: 11)
        let refused = try await mcp.awaitCall("tools/call", ["name": "search_files", "arguments": ["path": "D", "pattern": huge]])
        #expect(toolFailed(refused), "\(refused)")
        #expect(toolText(refused).contains("too large to match"), "\(refused)")
        // The REPL's wildcards and content search's patterns are bounded the same way.
        let name = String(repeating: "a", count: 200)
        directory.make(["container/Documents/UserFiles/D/\(name)": "a"])
        let wildcard = try await CofferBinary.running(["--container", container, "-c", "ls D/*a*a*a*a*a*a*a*a*a*a*a*a*b"])
        #expect(wildcard.status == 1 && wildcard.errors.contains("nothing matches"), "\(wildcard)")
        mcp.closeInput()
        _ = try await offPool { try mcp.waitForExit() }
    }

    @Test func sigtermEndsTheServerWhileAPatternIsMatched() async throws {
        _ = try coffer("mkdir D")
        // Names on which an extended glob backtracks as long as it may (a bounded time each).
        for index in 0..<3000 {
            let fd = open(user("D/\(index)" + String(repeating: "a", count: 200)), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            close(fd)
        }
        let mcp = try await mcp()
        let id = mcp.sendRequest("tools/call", ["name": "search_files", "arguments": ["path": "D", "pattern": "*+(a|aa|aaa)b"]])
        // Once it is matching: the request has been read, and no answer came yet.
        try await Task.sleep(for: .milliseconds(500))
        #expect(!mcp.received.contains { ($0 as? [String: Any])?["id"] as? Int == id })
        mcp.signal(SIGTERM)
        let began = ContinuousClock.now
        let status = try await offPool { try mcp.waitForExit(timeout: 30) }
        #expect(ContinuousClock.now - began < .seconds(5), "SIGTERM took \(ContinuousClock.now - began)")
        #expect(status == 0 || status == 128 + SIGTERM, "\(status)")
    }

    // MARK: 2. Imports in bounded descriptors

    @Test func aFolderOfSeventyThousandFilesImportsUnderALimitOfOneThousandDescriptors() async throws {
        let big = directory.url("host/big70k")
        try FileManager.default.createDirectory(atPath: big + "/sub", withIntermediateDirectories: true)
        for index in 0..<70_000 {
            let fd = open(big + (index % 10 == 0 ? "/sub" : "") + "/f\(index).txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            #expect(fd >= 0)
            if index % 1000 == 0 { _ = write(fd, "x", 1) }
            close(fd)
        }
        let limited = ["/bin/sh", "-c", "ulimit -n 1024; exec \"$0\" \"$@\""]
        let imported = try await offPool {
            try self.coffer("import '\(big)'", launcher: limited, timeout: 600)
        }
        #expect(imported.status == 0, "\(imported.errors)")
        let top = try FileManager.default.contentsOfDirectory(atPath: user("Import/big70k"))
        let below = try FileManager.default.contentsOfDirectory(atPath: user("Import/big70k/sub"))
        #expect(top.count == 63_001 && below.count == 7_000)
    }
}
