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

/// What a transport that routes messages (MCP over HTTP) reads of them in place.
struct StrictJSONMembersTests {
    func text(_ data: Data, _ range: Range<Int>?) -> String? {
        range.map { String(decoding: data[$0], as: UTF8.self) }
    }

    @Test func membersAreFoundOneLevelDownWithTheirEscapesRead() throws {
        let body = Data(#"{ "jsonrpc" : "2.0", "i\u0064": 1.0, "params": {"a": {"b": [1, {"c": 2}]}, "_meta": {"x\/y": "z", "progressToken": "t"}} }"#.utf8)
        guard case .single(let message) = try StrictJSON.scan(body) else { Issue.record("not one message"); return }
        let top = try #require(StrictJSON.members(of: body, at: message.range))
        #expect(Set(top.keys) == ["jsonrpc", "id", "params"])
        #expect(text(body, top["id"]) == "1.0")
        let paramsRange = try #require(top["params"])
        let params = try #require(StrictJSON.members(of: body, at: paramsRange))
        #expect(text(body, params["a"]) == #"{"b": [1, {"c": 2}]}"#)
        let metaRange = try #require(params["_meta"])
        let meta = try #require(StrictJSON.members(of: body, at: metaRange))
        let slashed = try #require(meta["x/y"])
        #expect(StrictJSON.string(in: body, at: slashed) == "z")
        let (id, token) = (try #require(top["id"]), try #require(meta["progressToken"]))
        let swapped = StrictJSON.replacing([(id, Data(#""h1""#.utf8)), (token, Data("7".utf8))], in: body)
        #expect(String(decoding: swapped, as: UTF8.self).contains(#""i\u0064": "h1""#))
        #expect(String(decoding: swapped, as: UTF8.self).contains(#""progressToken": 7}"#))
    }

    @Test func aNameGivenTwiceIsNoAnswerAndAValueThatIsNoObjectHasNoMembers() throws {
        let body = Data(#"{"id": 1, "i\u0064": 2, "params": [1]}"#.utf8)
        guard case .single(let message) = try StrictJSON.scan(body) else { Issue.record("not one message"); return }
        #expect(StrictJSON.members(of: body, at: message.range) == nil)
        let other = Data(#"{"params": [1]}"#.utf8)
        guard case .single(let single) = try StrictJSON.scan(other) else { Issue.record("not one message"); return }
        let params = try #require(StrictJSON.members(of: other, at: single.range)?["params"])
        #expect(StrictJSON.members(of: other, at: params) == [:])
    }
}
