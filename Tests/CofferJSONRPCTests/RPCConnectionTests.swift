import CofferCore
import CofferJSONRPC
import CofferTestSupport
import FileService
import Foundation
import Synchronization
import Testing

/// How many `test/wait` requests of each tag are waiting now, and the most at once.
let waiting = Mutex<[Int: (now: Int, most: Int)]>([:])

/// `test/wait {tag}`: waits until cancelled (a minute at most), counted under its tag. An
/// application's own method, added to the registry as `CofferApplication(extraMethods:)` does.
struct WaitMethod: RPCMethod {
    static let name = "test/wait"
    struct Params: Decodable, Sendable { var tag: Int }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NullResult {
        waiting.withLock { counts in
            var count = counts[params.tag] ?? (0, 0)
            count.now += 1
            count.most = max(count.most, count.now)
            counts[params.tag] = count
        }
        defer { waiting.withLock { $0[params.tag]?.now -= 1 } }
        try await Task.sleep(for: .seconds(60))
        return NullResult()
    }
}

func waitingNow(_ tag: Int) -> (now: Int, most: Int) { waiting.withLock { $0[tag] ?? (0, 0) } }

/// How `test/echo` was answered, most recent last: `true` on the reader's thread.
let echoedAtOnce = Mutex<[Bool]>([])

/// `test/echo {text, later}`: an application's own immediate method (the generic path, not
/// the one compiled for Coffer's own); with `later` it declines and runs as a task instead.
struct EchoMethod: ImmediateRPCMethod {
    static let name = "test/echo"
    struct Params: Decodable, Sendable { var text: String; var later: Bool? }
    struct Result: Encodable, Sendable { var text: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        echoedAtOnce.withLock { $0.append(false) }
        return Result(text: params.text)
    }

    static func runImmediately(_ params: Params, _ context: RequestContext) throws -> Result? {
        guard params.later != true else { return nil }
        guard !params.text.isEmpty else { throw CofferError(.invalidArgument, detail: "empty text") }
        echoedAtOnce.withLock { $0.append(true) }
        return Result(text: params.text)
    }
}

/// The JSON-RPC dispatcher and lifecycle over an in-process connection: no transport of
/// its own, so what is tested is the server.
struct RPCConnectionTests {
    func server(_ configure: (inout RPCServer.Configuration) throws -> Void = { _ in }) async throws -> InProcessServer {
        try await InProcessServer { configuration in
            configuration.methods = try RPCMethodRegistry.standard.adding([WaitMethod.self, EchoMethod.self])
            try configure(&configuration)
        }
    }

    @Test func theLifecycleIsDecidedInArrivalOrder() async throws {
        let rpc = try await server()
        #expect(errorCode(try await rpc.call("files/stat", ["path": "/"])) == -32002)
        rpc.notify("initialized")
        let initialized = try #require(result(try await rpc.initialize()))
        let methods = try #require(initialized["methods"] as? [String])
        #expect(methods.contains("files/list") && methods.contains("test/wait"))
        #expect((initialized["limits"] as? [String: Int])?["maxRequestsInFlight"] == 64)
        #expect(errorCode(try await rpc.initialize()) == -32600)
        #expect(result(try await rpc.call("files/stat", ["path": "/"])) != nil)
        #expect(try await rpc.call("shutdown")["result"] is NSNull)
        #expect(errorCode(try await rpc.call("files/stat", ["path": "/"])) == -32600)
        rpc.notify("exit")
        #expect(await rpc.ending() == .exit(afterShutdown: true))
    }

    @Test func anApplicationsImmediateMethodIsAnsweredAtOnceOrAsATask() async throws {
        let rpc = try await server()
        try await rpc.initialize()
        echoedAtOnce.withLock { $0.removeAll() }
        #expect(result(try await rpc.call("test/echo", ["text": "hé 你好"]))?["text"] as? String == "hé 你好")
        #expect(result(try await rpc.call("test/echo", ["text": "later", "later": true]))?["text"] as? String == "later")
        #expect(errorCode(try await rpc.call("test/echo", ["text": ""])) == -32803)
        #expect(errorCode(try await rpc.call("test/echo", ["text": 3])) == -32602)
        #expect(echoedAtOnce.withLock { $0 } == [true, false])
    }

    @Test func exitWithoutShutdownSaysSo() async throws {
        let rpc = try await server()
        try await rpc.initialize()
        rpc.notify("exit")
        #expect(await rpc.ending() == .exit(afterShutdown: false))
    }

    @Test func badMessagesGetTheirErrorAndTheConversationGoesOn() async throws {
        let rpc = try await server()
        try await rpc.initialize()
        rpc.client.send(Data("not json".utf8))
        #expect(errorCode(try await rpc.next("a parse error") { errorCode($0) == -32700 }) == -32700)
        #expect(errorCode(try await rpc.call("no/such")) == -32601)
        let missing = try await rpc.call("files/stat", [:])
        #expect(errorCode(missing) == -32602)
        #expect(errorMessage(missing)?.contains("“path”") == true)
        rpc.send(["jsonrpc": "2.0", "id": 99, "method": "files/stat", "params": [1, 2]])
        #expect(errorCode(try await rpc.response(to: 99)) == -32602)
        rpc.send([["jsonrpc": "2.0", "id": 100, "method": "files/stat", "params": ["path": "/"]],
                  ["jsonrpc": "2.0", "id": 101, "method": "no/such"]])
        let batch = try await rpc.next("a batch") { $0["batch"] != nil }["batch"] as? [[String: Any]]
        #expect(batch?.count == 2)
        // A message over the limit is refused without being kept.
        rpc.client.send(Data(repeating: UInt8(ascii: " "), count: (16 << 20) + 1))
        #expect(errorCode(try await rpc.next("a too-large error") { errorCode($0) == -32600 && $0["id"] is NSNull }) == -32600)
        #expect(result(try await rpc.call("files/stat", ["path": "/"])) != nil)
    }

    @Test func cancellingARequestStopsItsWorkAndAnswersIt() async throws {
        let rpc = try await server()
        try await rpc.initialize()
        let id = rpc.request("test/wait", ["tag": 1])
        #expect(await eventually { waitingNow(1).now == 1 })
        rpc.notify("$/cancelRequest", ["id": id])
        #expect(errorCode(try await rpc.response(to: id)) == -32800)
        #expect(waitingNow(1).now == 0)
    }

    @Test func aClientThatHangsUpHasItsWorkCancelled() async throws {
        let rpc = try await server()
        try await rpc.initialize()
        rpc.request("test/wait", ["tag": 2])
        rpc.request("test/wait", ["tag": 2])
        #expect(await eventually { waitingNow(2).now == 2 })
        rpc.client.hangUp()
        #expect(await rpc.ending() == .hungUp)
        #expect(waitingNow(2).now == 0)
    }

    @Test func theEndOfInputFinishesWhatWasRead() async throws {
        let rpc = try await server()
        try await rpc.initialize()
        let ids = (0..<50).map { _ in rpc.request("files/stat", ["path": "/"]) }
        rpc.client.finishSending()
        for id in ids { #expect(result(try await rpc.response(to: id)) != nil) }
        #expect(await rpc.ending() == .finished)
    }

    @Test func aConnectionRunsNoMoreThanItsLimitAndCancelsWhatWaits() async throws {
        let rpc = try await server { $0.limits.maxRequestsInFlight = 3 }
        try await rpc.initialize()
        let ids = (0..<10).map { _ in rpc.request("test/wait", ["tag": 3]) }
        #expect(await eventually { waitingNow(3).now == 3 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(waitingNow(3).most == 3)
        // Others still get through: a request waits its turn, it does not block the reader.
        let stat = rpc.request("files/stat", ["path": "/"])
        // A cancel reaches requests waiting for a place as well as running ones.
        for id in ids.reversed() { rpc.notify("$/cancelRequest", ["id": id]) }
        for id in ids { #expect(errorCode(try await rpc.response(to: id)) == -32800) }
        #expect(result(try await rpc.response(to: stat)) != nil)
        #expect(waitingNow(3).most == 3)
        #expect(waitingNow(3).now == 0)
    }

    @Test func whatIsLeftRunningWhenTheClientGoesIsCancelledNotStarted() async throws {
        let rpc = try await server { $0.limits.maxRequestsInFlight = 2 }
        try await rpc.initialize()
        for _ in 0..<6 { rpc.request("test/wait", ["tag": 4]) }
        #expect(await eventually { waitingNow(4).now == 2 })
        rpc.client.hangUp()
        #expect(await rpc.ending() == .hungUp)
        #expect(waitingNow(4).most == 2)
        #expect(waitingNow(4).now == 0)
    }

    @Test func clientsOfOneServiceHaveTheirOwnLifecycleAndLanguage() async throws {
        let rpc = try await server()
        try await rpc.initialize(locale: "zh-Hans")
        let (_, other, serving) = try rpc.secondClient()
        /// One request and its answer, waited for off Swift's pool.
        func call(_ method: String, _ params: [String: Any], id: Int) async -> [String: Any]? {
            other.send(try! JSONSerialization.data(withJSONObject: ["jsonrpc": "2.0", "id": id, "method": method, "params": params]))
            return await withCheckedContinuation { continuation in
                Thread {
                    // A minute, not the default ten seconds: a loaded machine (two builds beside the
                    // tests) once took longer than ten for the second client's `initialize`.
                    continuation.resume(returning: other.receive(timeout: .seconds(60)).flatMap {
                        try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
                    })
                }.start()
            }
        }
        #expect(await call("files/stat", ["path": "/"], id: 1).flatMap(errorCode) == -32002)
        #expect(await call("initialize", ["locale": "en"], id: 2).flatMap(result) != nil)
        let english = await call("files/stat", ["path": "/missing"], id: 3).flatMap(errorMessage)
        let chinese = errorMessage(try await rpc.call("files/stat", ["path": "/missing"]))
        #expect(english == "“files:/missing” doesn't exist.")
        #expect(chinese == "“files:/missing” 不存在。")
        other.finishSending()
        #expect(await serving.value == .finished)
        // The first conversation goes on.
        #expect(result(try await rpc.call("files/stat", ["path": "/"])) != nil)
    }

    @Test func listingsSortNewestFirstByDefaultAndShowNoSizeForLinks() async throws {
        let rpc = try await server()
        rpc.directory.make([rpc.user("old.txt"): "old", rpc.user("new.txt"): "new!"])
        let past = Date(timeIntervalSince1970: 1_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: rpc.directory.url(rpc.user("old.txt")))
        try FileManager.default.createSymbolicLink(atPath: rpc.directory.url(rpc.user("link")), withDestinationPath: "new.txt")
        try await rpc.initialize()
        func names(_ params: [String: Any]) async throws -> [String] {
            (result(try await rpc.call("files/list", ["path": "/"].merging(params) { $1 }))?["entries"] as? [[String: Any]] ?? [])
                .compactMap { $0["name"] as? String }.filter { $0.hasSuffix(".txt") }
        }
        // The same rule as `ls -t`: newest first unless told otherwise.
        #expect(try await names(["sort": "modified"]) == ["new.txt", "old.txt"])
        #expect(try await names(["sort": "modified", "descending": false]) == ["old.txt", "new.txt"])
        #expect(try await names(["sort": "size"]) == ["new.txt", "old.txt"])
        #expect(try await names([:]) == ["new.txt", "old.txt"])
        let link = try #require(result(try await rpc.call("files/stat", ["path": "/link"])))
        #expect(link["size"] == nil && link["linkTarget"] as? String == "new.txt")
        #expect(result(try await rpc.call("files/stat", ["path": "/new.txt"]))?["size"] as? Int == 4)
    }
}

struct RPCMethodRegistryTests {
    @Test func anApplicationsMethodsJoinCoffersOwn() throws {
        let registry = try RPCMethodRegistry.standard.adding([WaitMethod.self])
        #expect(registry.method(named: "test/wait") != nil)
        #expect(registry.method(named: "files/copy") != nil)
        #expect(RPCMethodRegistry.standard.method(named: "test/wait") == nil)
    }

    struct Duplicate: RPCMethod {
        static let name = "files/list"
        static func run(_ params: NoParams, _ context: RequestContext) async throws -> NullResult { NullResult() }
    }

    struct Reserved: RPCMethod {
        static let name = "$/cancelRequest"
        static func run(_ params: NoParams, _ context: RequestContext) async throws -> NullResult { NullResult() }
    }

    @Test func aTakenOrReservedNameIsRefused() {
        #expect(throws: CofferError.self) { try RPCMethodRegistry.standard.adding([Duplicate.self]) }
        #expect(throws: CofferError.self) { try RPCMethodRegistry.standard.adding([Reserved.self]) }
        #expect(throws: CofferError.self) { try RPCMethodRegistry.standard.adding([WaitMethod.self, WaitMethod.self]) }
    }

    /// The server's own hints, in both languages, used for what they cover.
    @Test(arguments: CofferError.Kind.allKinds)
    func everyRPCHintIsInBothLanguages(_ kind: CofferError.Kind) {
        #expect(MessageHints.rpc.problems(for: kind).isEmpty, "\(MessageHints.rpc.problems(for: kind))")
    }
}
