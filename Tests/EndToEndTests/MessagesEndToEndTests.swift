import CofferTestSupport
import Foundation
import Testing

/// Messages a new user meets (issue 30): each says what happened, names what it is about,
/// and suggests only a command that helps.
@Suite(.ownsProcesses) struct MessagesEndToEndTests {
    let directory = TemporaryDirectory("e2e-messages")
    var container: String { directory.url("container") }

    func coffer(_ commands: String) async throws -> CofferBinary.Result {
        try await CofferBinary.running(["--container", container, "--lang", "en", "-c", commands])
    }

    @Test func aDownloadThatCannotWorkNamesItsAddressAndIsNotResumedForever() async throws {
        let server = try TransferServer()
        let missing = server.url("/missing")
        let failed = try await coffer("download \(missing)")
        #expect(failed.status != 0)
        #expect(failed.errors.contains("coffer: \(missing): The server has nothing at that address (404)."), "\(failed.errors)")
        #expect(!failed.errors.contains("--resume"), "a 404 is not worth resuming: \(failed.errors)")
        // An unnamed resume leaves it alone; `downloads` still lists it, with why.
        let resumed = try await coffer("download --resume; downloads")
        #expect(resumed.output.hasPrefix("Nothing to resume.\n"), "\(resumed.output)")
        #expect(resumed.output.contains("failed"))
        // A broken name is final too.
        let unresolved = try await coffer("download http://no-such-host.invalid/file")
        #expect(unresolved.errors.contains("http://no-such-host.invalid/file: The server's name can't be found"), "\(unresolved.errors)")
        #expect(try await coffer("download --resume").output == "Nothing to resume.\n")
    }

    @Test func anUploadsFailureNamesTheAddressAndNoDownloadCommand() async throws {
        let server = try TransferServer()
        directory.make(["container/Documents/UserFiles/a.txt": "a"])
        // Nothing listens there: refused at once.
        let closed = "http://127.0.0.1:9/upload"
        let failed = try await coffer("upload a.txt \(closed)")
        #expect(failed.status != 0)
        #expect(failed.errors.contains("coffer: \(closed): The server can't be reached"), "\(failed.errors)")
        #expect(!failed.errors.contains("download"), "\(failed.errors)")
        _ = server
    }

    @Test func emptyPatternsAndFoldersGivenAsFilesSayWhatToDo() async throws {
        directory.make(["container/Documents/UserFiles/Folder/a.txt": "a"])
        let empty = try await coffer("find ''")
        #expect(empty.errors.contains("The search pattern is empty."), "\(empty.errors)")
        #expect(!empty.errors.contains("empty-pattern"))
        let folder = try await coffer("cat Folder")
        #expect(folder.errors.contains("ls lists what it holds"), "\(folder.errors)")
        #expect(!folder.errors.contains("cp -r"))
    }

    /// The browser is served on loopback only: every other address is refused with one message,
    /// which never advises an address that would be refused in turn (issue 48).
    @Test func serveKeepsTheBrowserOnLoopbackAndSaysWhatToDoInstead() async throws {
        for address in ["0.0.0.0", "::", "192.168.1.20"] {
            let refused = try await CofferBinary.running(["--container", container, "--lang", "en", "serve", "--address", address])
            #expect(refused.status == 2, "\(address)")
            #expect(refused.errors.contains("served on 127.0.0.1 only") && refused.errors.contains("SSH tunnel")
                    && refused.errors.contains("--share-only --address \(address)"), "\(refused.errors)")
            #expect(!refused.errors.contains("192.168.1.20") || address == "192.168.1.20", "\(refused.errors)")
        }
    }

    @Test func wrongParamsAndPathsGetPlainWords() async throws {
        let rpc = try RPCProcess(container: container)
        try rpc.initialize()
        let sorted = try rpc.call("files/list", ["path": "/", "sort": "bogus"])
        #expect(errorMessage(sorted) == "param “sort” must be one of name, modified, size or kind")
        let conflict = try rpc.call("files/copy", ["path": "/a", "toDirectory": "/", "conflict": "sometimes"])
        #expect(errorMessage(conflict) == "param “conflict” must be one of fail, keepBoth, replace, replaceFolder or ask")
        rpc.closeInput()
        _ = try rpc.waitForExit()

        let mcp = try await RPCProcess.mcp(container: container)
        let root = try #require(result(try await mcp.awaitCall("tools/call", ["name": "list_directory", "arguments": ["path": "/"]])))
        let text = ((root["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
        #expect(root["isError"] as? Bool == true)
        #expect(text.contains("outside the allowed directory") && !text.contains("link"), "\(text)")
        mcp.closeInput()
        _ = try mcp.waitForExit()
    }

    /// A trash entry that breaks the specification is said in the same sentence by every front end.
    @Test func aBrokenTrashEntryIsSaidAlikeEverywhere() async throws {
        _ = try await coffer("ls")
        directory.make(["container/Library/Trash/info/ghost.txt.trashinfo":
                            "[Trash Info]\nPath=/nowhere/ghost.txt\nDeletionDate=2026-01-01T10:00:00\n"])
        let sentence = "The trash has information about “ghost.txt” but not the item; it is skipped, and emptying the trash removes it."
        let repl = try await coffer("trash")
        #expect(repl.errors.contains(sentence), "\(repl.errors)")
        let rpc = try RPCProcess(container: container)
        try rpc.initialize()
        let listed = try #require(result(try rpc.call("trash/list")))
        let problems = listed["problems"] as? [[String: Any]]
        #expect(problems?.first?["reason"] as? String == "missingItem" && problems?.first?["message"] as? String == sentence,
                "\(listed)")
        rpc.closeInput()
        _ = try rpc.waitForExit()
        let mcp = try await RPCProcess.mcp(container: container)
        let trash = try #require(result(try await mcp.awaitCall("tools/call", ["name": "list_trash", "arguments": [String: Any]()])))
        #expect((trash["structuredContent"] as? [String: Any])?["problems"] as? [String] == [sentence], "\(trash)")
        mcp.closeInput()
        _ = try mcp.waitForExit()
    }
}
