import CofferCore
import CofferJSONRPC
import CofferTestSupport
import Foundation
import Testing

/// The session's conflict question asked of a JSON-RPC client (`conflict/ask`), where its
/// front end's row of the defaults table says "ask" — the web page's socket.
struct ClientQuestionsTests {
    func webServer() async throws -> InProcessServer {
        let rpc = try await InProcessServer { $0.frontEnd = "web" }
        rpc.directory.make([rpc.user("a.txt"): "new", rpc.user("Docs/a.txt"): "old"])
        return rpc
    }

    func question(_ rpc: InProcessServer) async throws -> [String: Any] {
        try await rpc.next("conflict/ask") { $0["method"] as? String == "conflict/ask" }
    }

    func answer(_ rpc: InProcessServer, _ question: [String: Any], _ choice: String) {
        rpc.send(["jsonrpc": "2.0", "id": question["id"]!, "result": ["choice": choice]])
    }

    @Test func aClientThatAnswersIsAskedAndItsAnswerHolds() async throws {
        let rpc = try await webServer()
        let initialized = try #require(result(try await rpc.call("initialize", ["locale": "en",
                                                                                "capabilities": ["conflictQuestions": true]])))
        #expect((initialized["defaults"] as? [String: Any])?["conflicts"] as? [String: String] == [
            "copy": "ask", "move": "ask", "rename": "ask", "restore": "ask", "beginUpload": "ask"])
        let copy = rpc.request("files/copy", ["path": "/a.txt", "toDirectory": "/Docs"])
        let asked = try await question(rpc)
        let params = try #require(asked["params"] as? [String: Any])
        #expect(params["path"] as? String == "files:/Docs/a.txt")
        #expect(params["message"] as? String
                == "“a.txt” (a file, 3 B) already exists in files:/Docs. If it is replaced, it is kept as a version.")
        #expect((params["existing"] as? [String: Any])?["size"] as? Int == 3)
        answer(rpc, asked, "keepBoth")
        #expect(result(try await rpc.response(to: copy))?["path"] as? String == "files:/Docs/a (2).txt")

        // "replace": the old file is kept as a version, the new one takes its place.
        let again = rpc.request("files/copy", ["path": "/a.txt", "toDirectory": "/Docs"])
        answer(rpc, try await question(rpc), "replace")
        #expect(result(try await rpc.response(to: again))?["path"] as? String == "files:/Docs/a.txt")
        #expect(rpc.directory.contents(rpc.user("Docs/a.txt")) == "new")
        let versions = try #require(result(try await rpc.call("files/versions", ["path": "/Docs/a.txt"]))?["versions"] as? [[String: Any]])
        #expect(versions.count == 1)

        // "cancel": nothing changes, and the request answers as a cancelled one.
        let upload = rpc.request("files/upload/begin", ["path": "/Docs/a.txt"])
        answer(rpc, try await question(rpc), "cancel")
        #expect(errorCode(try await rpc.response(to: upload)) == -32800)
    }

    @Test func aClientThatDoesNotAnswerIsNotAskedAndTheNameStaysTaken() async throws {
        let rpc = try await webServer()
        try await rpc.initialize()
        #expect(errorKind(try await rpc.call("files/copy", ["path": "/a.txt", "toDirectory": "/Docs"])) == "fileExists")
        #expect(rpc.directory.contents(rpc.user("Docs/a.txt")) == "old")
    }

    /// Input ends while a question waits (a closed pipe: the server still answers what it
    /// read): the question gets no answer, the move is cancelled, and the conversation ends.
    @Test func aQuestionLeftUnansweredWhenTheInputEndsIsACancel() async throws {
        let rpc = try await webServer()
        _ = try await rpc.call("initialize", ["capabilities": ["conflictQuestions": true]])
        let move = rpc.request("files/move", ["path": "/a.txt", "toDirectory": "/Docs"])
        _ = try await question(rpc)
        rpc.client.finishSending()
        #expect(errorCode(try await rpc.response(to: move)) == -32800)
        #expect(await rpc.ending() == .finished)
        #expect(rpc.directory.contents(rpc.user("Docs/a.txt")) == "old" && rpc.directory.contents(rpc.user("a.txt")) == "new")
    }

    /// A save over a version that is no longer the file's, made with `conflict: "ask"`, asks
    /// the client the session's changed-file question: kind, sentence, the four choices.
    @Test func aSaveOverAChangedFileAsksTheClientOnce() async throws {
        let rpc = try await webServer()
        _ = try await rpc.call("initialize", ["locale": "en", "capabilities": ["conflictQuestions": true]])
        let read = try #require(result(try await rpc.call("files/stat", ["path": "/a.txt"])))
        let version = try #require(read["version"] as? String)
        rpc.directory.make([rpc.user("a.txt"): "theirs"])
        let save = rpc.request("files/write", ["path": "/a.txt", "data": "mine", "ifVersion": version, "conflict": "ask"])
        let asked = try await question(rpc)
        let params = try #require(asked["params"] as? [String: Any])
        #expect(params["kind"] as? String == "changedSinceRead" && params["path"] as? String == "files:/a.txt")
        #expect((params["message"] as? String)?.contains("was changed by someone else") == true)
        #expect(params["choices"] as? [String] == ["overwrite", "keepBoth", "keepInRecovered", "cancel"])
        answer(rpc, asked, "keepInRecovered")
        #expect(result(try await rpc.response(to: save))?["path"] as? String == "files:/Recovered/a.txt")
        #expect(rpc.directory.contents(rpc.user("a.txt")) == "theirs" && rpc.directory.contents(rpc.user("Recovered/a.txt")) == "mine")

        // Cancelled: refused as without a question, nothing written.
        let again = rpc.request("files/write", ["path": "/a.txt", "data": "mine", "ifVersion": version, "conflict": "ask"])
        answer(rpc, try await question(rpc), "cancel")
        #expect(errorKind(try await rpc.response(to: again)) == "changedSinceRead")
        #expect(rpc.directory.contents(rpc.user("a.txt")) == "theirs")
    }
}
