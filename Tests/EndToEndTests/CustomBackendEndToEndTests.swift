import CofferTestSupport
import Foundation
import Testing

/// `custom-backend-example`: the normal front ends over `files:` plus the example's `mem:`
/// mount, copying both ways, with conflicts, and running out of its quota.
///
/// The example is a package of its own (`Examples/custom-backend`), so `swift test` here does not
/// build it: `.ci/build_examples.sh` does, into `.build/examples`. Without that build the suite is
/// skipped, unless `COFFER_REQUIRE_EXAMPLES=1` (as in CI), which makes the missing program a failure.
@Suite(.serialized, .ownsProcesses,
       .enabled(if: FileManager.default.isExecutableFile(atPath: CofferBinary.example("custom-backend-example").path)
                    || ProcessInfo.processInfo.environment["COFFER_REQUIRE_EXAMPLES"] == "1",
                "build the example first: bash .ci/build_examples.sh"))
struct CustomBackendEndToEndTests {
    let directory = TemporaryDirectory("e2e-custom")
    var container: String { directory.url("container") }
    let program = CofferBinary.example("custom-backend-example")

    func example(_ commands: String, language: String = "en", quota: Int = 1 << 20) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", language, "-c", commands],
                             environment: ["COFFER_MEM_QUOTA": String(quota)], program: program)
    }

    func fixture() throws {
        _ = try example("ls")
        directory.make(["container/Documents/UserFiles/notes.txt": "files notes",
                        "container/Documents/UserFiles/Docs/报告 1.txt": "report one",
                        "container/Documents/UserFiles/big.bin": String(repeating: "x", count: 3_000)])
    }

    @Test func copiesBetweenFilesAndMemBothWaysWithConflicts() throws {
        try fixture()
        let result = try example("""
            mounts; cp notes.txt mem:/; cp -r Docs mem:/; ls mem:/; cat mem:/notes.txt; \
            cp --keep-both notes.txt mem:/; ls mem:/; \
            cp mem:/notes.txt 'mem:/Docs/from mem.txt'; cp 'mem:/Docs/报告 1.txt' /Docs/copy.txt; \
            rename mem:/notes.txt renamed.txt; cp mem:/renamed.txt /notes.txt
            """)
        #expect(result.status == 1)
        #expect(result.output == """
            files:\tread-write
            trash:\tread-only
            mem:\tread-write
            Docs
            notes.txt
            files notes
            Docs
            notes (2).txt
            notes.txt

            """, "\(result.output)")
        // The last copy met notes.txt in files: and failed, as `cp` without a policy does.
        #expect(result.errors.hasPrefix("custom-backend-example: An item named “files:/notes.txt” already exists."),
                "\(result.errors)")
        #expect(result.errors.split(separator: "\n").count == 1)
        #expect(directory.contents("container/Documents/UserFiles/Docs/copy.txt") == "report one")
        #expect(directory.contents("container/Documents/UserFiles/notes.txt") == "files notes")

        let replaced = try example("cp notes.txt mem:/a.txt; cp Docs/报告\\ 1.txt mem:/b.txt; cp --replace mem:/b.txt mem:/a.txt; "
                                   + "cp mem:/a.txt /from-mem.txt; ls mem:/")
        #expect(replaced.status == 0, "\(replaced.errors)")
        #expect(replaced.output == "a.txt\nb.txt\n")
        #expect(directory.contents("container/Documents/UserFiles/from-mem.txt") == "report one")
    }

    @Test func pipedCommandsWorkOnMem() throws {
        try fixture()
        let result = try CofferBinary.run(["--container", container], input: "cp notes.txt mem:/\ncd mem:/\nls\npwd\ncat notes.txt\n",
                                          program: program)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "notes.txt\nmem:/\nfiles notes\n")
    }

    /// On a terminal: the prompt, completion of the mount's name and of names inside it.
    @Test func theInteractiveREPLCompletesMem() throws {
        try fixture()
        let session = try TerminalSession([program.path, "--container", container, "--lang", "en"],
                                          environment: ["TERM": "screen", "LANG": "C.UTF-8", "HOME": directory.path,
                                                        "NO_COLOR": "1"])
        defer { session.close() }
        try session.waitForLastLine("files:/>")
        try session.type("mkdir me")
        try session.press("Tab")
        try session.waitForLastLine("files:/> mkdir mem:/")
        try session.type("Projects")
        try session.press("Enter")
        try session.waitForLastLine("files:/>")
        try session.type("cp notes.txt mem:/Pro")
        try session.press("Tab")
        try session.waitForLastLine("files:/> cp notes.txt mem:/Projects/")
        try session.press("Enter")
        try session.waitForLastLine("files:/>")
        try session.type("cd mem:/Projects")
        try session.press("Enter")
        try session.waitForLastLine("mem:/Projects>")
        try session.type("ls")
        try session.press("Enter")
        // The command line above already shows “notes.txt”: wait for the listing itself.
        _ = try session.wait { $0.contains("mem:/Projects> ls\nnotes.txt") }
        try session.type("quit")
        try session.press("Enter")
        try session.waitForExit()
    }

    @Test func theQuotaErrorIsAUserMessage() throws {
        try fixture()
        let english = try example("cp notes.txt mem:/; cp big.bin mem:/; ls mem:/", quota: 2_000)
        #expect(english.status == 1)
        #expect(english.errors.hasPrefix("custom-backend-example: There isn't enough space to write “mem:/big.bin”."),
                "\(english.errors)")
        #expect(english.output == "notes.txt\n")
        let chinese = try example("cp big.bin mem:/", language: "zh", quota: 2_000)
        #expect(chinese.errors.contains("空间不足，无法写入 “mem:/big.bin”"), "\(chinese.errors)")
    }

    @Test func theRPCServerOffersMemToPrograms() throws {
        try fixture()
        let rpc = try RPCProcess(container: container, environment: ["COFFER_MEM_QUOTA": "2000"], program: program)
        let initialized = try #require(result(try rpc.initialize()))
        let mounts = try #require(initialized["mounts"] as? [[String: Any]])
        #expect(mounts.map { $0["name"] as? String } == ["files", "trash", "mem"])
        #expect((mounts.last?["description"] as? String)?.contains("2000 bytes") == true)
        #expect((initialized["serverInfo"] as? [String: Any])?["name"] as? String == "custom-backend-example")

        let copied = try #require(result(try rpc.call("files/copy", ["path": "/notes.txt", "toDirectory": "mem:/"])))
        #expect(copied["path"] as? String == "mem:/notes.txt")
        let conflict = try rpc.call("files/copy", ["path": "/notes.txt", "toDirectory": "mem:/", "conflict": "fail"])
        #expect(errorKind(conflict) == "fileExists")
        // Copies keep both by default, as the contract says.
        let kept = try #require(result(try rpc.call("files/copy", ["path": "/notes.txt", "toDirectory": "mem:/"])))
        #expect(kept["path"] as? String == "mem:/notes (2).txt")
        #expect(result(try rpc.call("files/write", ["path": "mem:/Docs.txt", "data": "written in mem"]))?["size"] as? Int == 14)
        let back = try #require(result(try rpc.call("files/copy", ["path": "mem:/Docs.txt", "toDirectory": "/Docs"])))
        #expect(back["path"] as? String == "files:/Docs/Docs.txt")
        #expect(directory.contents("container/Documents/UserFiles/Docs/Docs.txt") == "written in mem")
        let back2 = try rpc.call("files/copy", ["path": "mem:/Docs.txt", "toDirectory": "/Docs", "conflict": "fail"])
        #expect(errorKind(back2) == "fileExists")
        let listing = try #require(result(try rpc.call("files/list", ["path": "mem:/"])))
        #expect((listing["entries"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
                == ["Docs.txt", "notes (2).txt", "notes.txt"])
        let read = try #require(result(try rpc.call("files/read", ["path": "mem:/notes.txt", "encoding": "text"])))
        #expect(read["data"] as? String == "files notes")
        #expect(result(try rpc.call("files/stat", ["path": "mem:/notes.txt"]))?["size"] as? Int == 11)
        let full = try rpc.call("files/copy", ["path": "/big.bin", "toDirectory": "mem:/"])
        #expect(errorCode(full) == -32803 && errorKind(full) == "outOfSpace")
        #expect(errorMessage(full) == "There isn't enough space to write “mem:/big.bin”.")
        let search = try #require(result(try rpc.call("files/search", ["query": "notes", "path": "mem:/"])))
        #expect(search["engine"] as? String == "walk")
        #expect((search["matches"] as? [[String: Any]])?.count == 2)
        // The other files/* methods, on mem: as on files:.
        #expect(result(try rpc.call("files/createDirectory", ["path": "mem:/New"]))?["kind"] as? String == "folder")
        #expect(result(try rpc.call("files/rename", ["path": "mem:/notes (2).txt", "newName": "second.txt"]))?["path"] as? String
                == "mem:/second.txt")
        #expect(result(try rpc.call("files/move", ["path": "mem:/second.txt", "toDirectory": "mem:/New"]))?["path"] as? String
                == "mem:/New/second.txt")
        #expect(result(try rpc.call("files/move", ["path": "mem:/New/second.txt", "toDirectory": "/"]))?["path"] as? String
                == "files:/second.txt")
        #expect(directory.contents("container/Documents/UserFiles/second.txt") == "files notes")
        let upload = try #require(result(try rpc.call("files/upload/begin", ["path": "mem:/up.bin"]))?["uploadId"] as? String)
        _ = try rpc.call("files/upload/append", ["uploadId": upload, "offset": 0, "data": "AQID"])
        #expect(result(try rpc.call("files/upload/commit", ["uploadId": upload]))?["size"] as? Int == 3)
        let trashed = try #require(result(try rpc.call("files/trash", ["path": "mem:/Docs.txt"])))
        #expect(trashed["originalPath"] as? String == "mem:/Docs.txt")
        #expect(errorKind(try rpc.call("files/stat", ["path": "mem:/Docs.txt"])) == "noSuchFile")
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 0)
    }

    /// The application's own JSON-RPC method, added as its mount is, walked end to end.
    @Test func theApplicationsOwnMethodIsServedBesideCoffers() throws {
        let rpc = try RPCProcess(container: container, environment: ["COFFER_MEM_QUOTA": "5000"], program: program)
        let initialized = try #require(result(try rpc.initialize()))
        #expect((initialized["methods"] as? [String])?.contains("mem/usage") == true)
        let empty = try #require(result(try rpc.call("mem/usage")))
        #expect(empty["usedBytes"] as? Int == 0 && empty["quota"] as? Int == 5000 && empty["freeBytes"] as? Int == 5000)
        _ = try rpc.call("files/write", ["path": "mem:/a.txt", "data": String(repeating: "x", count: 1200)])
        _ = try rpc.call("files/write", ["path": "mem:/b.txt", "data": String(repeating: "y", count: 300)])
        let used = try #require(result(try rpc.call("mem/usage")))
        #expect(used["usedBytes"] as? Int == 1500 && used["freeBytes"] as? Int == 3500)
        // Params it does not know are ignored; params of the wrong shape are refused like any method's.
        #expect(errorCode(try rpc.call("mem/usage", ["extra": true])) == nil)
        rpc.send(["jsonrpc": "2.0", "id": 900, "method": "mem/usage", "params": [1]] as [String: Any])
        #expect(errorCode(try rpc.response(to: 900)) == -32602)
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 0)

        // Plain coffer does not have it.
        let plain = try RPCProcess(container: container)
        try plain.initialize()
        #expect(errorCode(try plain.call("mem/usage")) == -32601)
        plain.closeInput()
        #expect(try plain.waitForExit() == 0)
    }
}
