import CofferTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A FIFO and a device in `files:` get the same refusal from every front end — `unsupported`,
/// said in the same sentence, at once — by the one readable-file rule (issue 31). The web's
/// file route is checked by `.ci/web_check.py`.
@Suite(.ownsProcesses) struct SpecialFilesEndToEndTests {
    let directory = TemporaryDirectory("e2e-special")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { directory.url("container/Documents/UserFiles/" + relative) }

    @Test func aFIFOAndADeviceAreRefusedAlikeEverywhere() async throws {
        _ = try await CofferBinary.running(["--container", container, "-c", "ls"])
        #expect(mkfifo(user("pipe"), 0o600) == 0)
        var specials = ["pipe"]
        // A character device, as root can make one (the same as /dev/null); skipped otherwise.
        if mknod(user("device"), S_IFCHR | 0o600, dev_t((1 << 8) | 3)) == 0 { specials.append("device") }  // makedev(1, 3)
        for name in specials {
            let sentence = "“files:/\(name)”"
            let repl = try await CofferBinary.running(["--container", container, "--lang", "en", "-c", "cat \(name)"])
            #expect(repl.status != 0 && repl.errors.contains(sentence) && !repl.errors.contains("is a folder"), "\(repl.errors)")

            let rpc = try RPCProcess(container: container)
            try rpc.initialize()
            let read = try rpc.call("files/read", ["path": "/\(name)"])
            #expect(errorKind(read) == "unsupported", "\(read)")
            let fetched = try rpc.call("files/fetch", ["path": "/\(name)"])
            #expect(errorKind(fetched) == "unsupported", "\(fetched)")
            rpc.closeInput()
            _ = try rpc.waitForExit()

            let mcp = try await RPCProcess.mcp(container: container)
            let tool = try #require(result(try await mcp.awaitCall("tools/call", ["name": "read_text_file",
                                                                                 "arguments": ["path": "files:/\(name)"]])))
            #expect(tool["isError"] as? Bool == true, "\(tool)")
            mcp.closeInput()
            _ = try mcp.waitForExit()
        }
    }
}
