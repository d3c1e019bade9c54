import CofferJSONRPC
import Foundation
import Testing

/// JSON-RPC 2.0 held to the letter: invalid requests are answered even without an id, the
/// JSON is RFC 8259's (no trailing commas, no raw control characters), ids come back as sent.
struct StrictMessagesTests {
    func server() async throws -> InProcessServer {
        let rpc = try await InProcessServer()
        try await rpc.initialize()
        return rpc
    }

    func send(_ rpc: InProcessServer, _ text: String) { rpc.client.send(Data(text.utf8)) }

    @Test(arguments: [#"{}"#, #"{"foo":"boo"}"#, #"{"jsonrpc":"2.0","method":5}"#, #"{"jsonrpc":"2.0"}"#,
                      #"{"jsonrpc":"1.0","method":"initialized"}"#, #"5"#, #""text""#])
    func anInvalidRequestWithoutAnIDIsAnsweredForIDNull(_ text: String) async throws {
        let rpc = try await server()
        send(rpc, text)
        let answer = try await rpc.next("an answer") { $0["id"] is NSNull }
        #expect(errorCode(answer) == -32600)
    }

    @Test func aBatchOfInvalidRequestsIsAnsweredElementByElement() async throws {
        let rpc = try await server()
        send(rpc, #"[{}, 7, {"jsonrpc":"2.0","method":"initialized"}]"#)
        let batch = try #require(try await rpc.next("a batch") { $0["batch"] != nil }["batch"] as? [[String: Any]])
        #expect(batch.count == 2)
        #expect(batch.allSatisfy { errorCode($0) == -32600 && $0["id"] is NSNull })
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"path":"files:/",}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"path":"files:/"},}"#,
        #"[{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"path":"files:/"}},]"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files/stat\",\"params\":{\"path\":\"files:/a\tb\"}}",
        #"{"jsonrpc":"2.0","id":01,"method":"files/stat"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"path":"\x"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"files/stat"} {}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"a":[1,2,]}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"a":tru}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"a":"#,
    ])
    func textThatIsNotStrictJSONIsAParseError(_ text: String) async throws {
        let rpc = try await server()
        send(rpc, text)
        let answer = try await rpc.next("an answer") { $0["id"] is NSNull }
        #expect(errorCode(answer) == -32700)
    }

    @Test(arguments: ["1.0", "18446744073709551616", "-0", "1e3", "2.50", "-9223372036854775808", "\"a b\""])
    func anIDComesBackAsTheTextItWasSentAs(_ id: String) async throws {
        let rpc = try await server()
        send(rpc, #"{"jsonrpc":"2.0","id":\#(id),"method":"files/stat","params":{"path":"files:/"}}"#)
        let answer = try await rpc.next("the answer") { ($0[rawKey] as? String)?.contains("\"id\":\(id),") == true }
        #expect(result(answer)?["kind"] as? String == "folder")
    }

    @Test func exitSentAsARequestIsAnsweredBeforeTheEnd() async throws {
        let rpc = try await server()
        send(rpc, #"{"jsonrpc":"2.0","id":7,"method":"exit"}"#)
        let answer = try await rpc.response(to: 7)
        #expect(answer["result"] is NSNull)
        #expect(await rpc.ending() == .exit(afterShutdown: false))
    }

    @Test func deepNestingIsRefusedNotRecursedInto() async throws {
        let rpc = try await server()
        send(rpc, #"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"a":"# + String(repeating: "[", count: 100_000))
        let answer = try await rpc.next("an answer") { $0["id"] is NSNull }
        #expect(errorCode(answer) == -32700)
    }
}
