import CofferTestSupport
import Foundation
import Testing

/// `coffer rpc --listen unix:PATH`: one server, many clients at once, each in a session of
/// its own; the socket's life from creation to removal.
@Suite(.serialized, .ownsProcesses)
struct RPCSocketEndToEndTests {
    let directory = TemporaryDirectory("e2e-socket")
    var container: String { directory.url("container") }
    var socketPath: String { directory.url("rpc.sock") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }

    /// The server, listening once its socket answers.
    func listen(_ extra: [String] = []) throws -> RPCProcess {
        let server = try RPCProcess(container: container, arguments: ["--listen", "unix:\(socketPath)"] + extra)
        _ = try RPCSocketClient(path: socketPath)  // waits until it accepts
        return server
    }

    /// Expects the server to have said, on standard output, that it is ready. The line may
    /// reach the test's reader after the socket accepts: it is waited for, within a deadline.
    func expectSaidReady(_ server: RPCProcess, sourceLocation: SourceLocation = #_sourceLocation) {
        let ready = "Coffer is serving JSON-RPC at unix:\(socketPath)"
        let deadline = Date().addingTimeInterval(15)
        var said = server.frames.map { String(decoding: $0, as: UTF8.self) }
        while !said.contains(ready) && Date() < deadline {
            usleep(10_000)
            said = server.frames.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(said.contains(ready), "\(said)", sourceLocation: sourceLocation)
    }

    /// A server with a 6 GiB file to copy, and a client copying it (seen under way): what
    /// happens to the copy is then the test's.
    func copyUnderWay() throws -> (server: RPCProcess, client: RPCSocketClient, copy: Int) {
        _ = try CofferBinary.run(["--container", container, "-c", "ls"])
        try directory.makeSparseFile(user("big.bin"), gigabytes: 6)
        let server = try listen()
        let client = try RPCSocketClient(path: socketPath)
        try client.initialize()
        let copy = client.sendRequest("files/copy", ["path": "/big.bin", "toDirectory": "/Download", "workDoneToken": "big"])
        try waitForProgress(client)
        return (server, client, copy)
    }

    /// Waits for a `$/progress` report on `client`.
    func waitForProgress(_ client: RPCClient) throws {
        _ = try client.waitFor("a progress report") { message -> Bool? in
            guard let object = message as? [String: Any], object["method"] as? String == "$/progress",
                  ((object["params"] as? [String: Any])?["value"] as? [String: Any])?["kind"] as? String == "report"
            else { return nil }
            return true
        }
    }

    // MARK: The relay

    /// `rpc --connect unix:PATH`: a client that can only start a program reaches the server
    /// through it, in the server's session and container; without a server it says so.
    @Test func aRelayJoinsStandardIOToTheServer() throws {
        let server = try listen()
        defer { server.signal(SIGTERM) }
        let relay = try RPCProcess(container: directory.url("unused"), framing: .lsp, arguments: ["--connect", "unix:\(socketPath)"])
        #expect(result(try relay.initialize()) != nil)
        #expect(result(try relay.call("files/write", ["path": "/via relay.txt", "data": "hi"])) != nil)
        #expect(directory.contents(user("via relay.txt")) == "hi")
        relay.closeInput()
        #expect(try relay.waitForExit() == 0)
        #expect(!directory.exists("unused"), "the relay opens no container of its own")
        let missing = try CofferBinary.run(["rpc", "--connect", "unix:" + directory.url("nobody.sock")])
        #expect(missing.status == 1 && missing.errors.contains("no Coffer server is listening on"), "\(missing.errors)")
    }

    // MARK: Many clients

    /// A client's whole life: lifecycle, changes, reads, an upload, a watch, errors in its
    /// own language. Returns what went wrong, if anything.
    func ordinaryClient(_ index: Int) -> [String] {
        var problems: [String] = []
        func check(_ condition: Bool, _ what: String) { if !condition { problems.append("client \(index): \(what)") } }
        do {
            let client = try RPCSocketClient(path: socketPath, framing: index % 2 == 0 ? .ndjson : .lsp)
            let chinese = index % 3 == 0
            check(errorCode(try client.call("files/stat", ["path": "/"])) == -32002, "a request before initialize")
            check(result(try client.initialize(locale: chinese ? "zh-Hans" : "en")) != nil, "initialize")
            let folder = "/client \(index)"
            check(result(try client.call("files/createDirectory", ["path": folder])) != nil, "createDirectory")
            let watch = result(try client.call("files/watch", ["path": folder]))?["watchId"] as? String
            check(watch != nil, "watch")
            check(result(try client.call("files/write", ["path": "\(folder)/笔记.txt", "data": "note \(index)"])) != nil, "write")
            let listing = result(try client.call("files/list", ["path": folder]))?["entries"] as? [[String: Any]]
            check(listing?.map { $0["name"] as? String } == ["笔记.txt"], "list")
            let read = result(try client.call("files/read", ["path": "\(folder)/笔记.txt", "encoding": "text"]))
            check(read?["data"] as? String == "note \(index)", "read")
            let upload = result(try client.call("files/upload/begin", ["path": "\(folder)/up.bin"]))?["uploadId"] as? String ?? ""
            _ = try client.call("files/upload/append", ["uploadId": upload, "offset": 0, "data": "AAEC"])
            check(result(try client.call("files/upload/commit", ["uploadId": upload]))?["size"] as? Int == 3, "upload")
            let missing = try client.call("files/stat", ["path": "/nowhere \(index)"])
            let message = errorMessage(missing) ?? ""
            check(errorKind(missing) == "noSuchFile", "a missing file")
            check(message.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF } == chinese,
                  "the message in the client's language: \(message)")
            let found = result(try client.call("files/search", ["query": "笔记", "path": folder]))?["matches"] as? [[String: Any]]
            check(found?.count == 1, "search")
            // Its watch heard its own changes, and nobody else's.
            _ = try client.waitFor("a change") { message -> Bool? in
                (message as? [String: Any])?["method"] as? String == "files/didChange" ? true : nil
            }
            let changed = client.notifications("files/didChange").flatMap { ($0["changes"] as? [[String: Any]]) ?? [] }
            check(changed.allSatisfy { ($0["path"] as? String)?.hasPrefix("files:\(folder)/") == true }, "only its own changes")
            check(try client.call("shutdown")["result"] is NSNull, "shutdown")
            client.notify("exit")
        } catch {
            problems.append("client \(index): \(error)")
        }
        return problems
    }

    /// Malformed frames of every kind on one connection; it stays usable.
    func garbageClient() -> [String] {
        do {
            let client = try RPCSocketClient(path: socketPath)
            try client.initialize()
            client.sendRaw(Data("this is not json\n".utf8))
            client.sendRaw(Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D, 0x0A]))
            client.sendRaw(Data((String(repeating: "[", count: 100_000) + "\n").utf8))
            client.sendRaw(Data(repeating: UInt8(ascii: "x"), count: 17 << 20) + Data("\n".utf8))
            client.sendRaw(Data(#"{"jsonrpc":"2.0","id":"a","method":"files/stat","params":[1]}"#.utf8) + Data("\n".utf8))
            guard result(try client.call("files/stat", ["path": "/"])) != nil,
                  result(try client.call("files/createDirectory", ["path": "/garbage survived"])) != nil
            else { return ["garbage: the connection died"] }
            let errors = client.received.compactMap { $0 as? [String: Any] }.compactMap(errorCode)
            guard errors.filter({ $0 == -32700 }).count >= 3, errors.contains(-32600), errors.contains(-32602) else {
                return ["garbage: errors \(errors)"]
            }
            guard try client.call("shutdown")["result"] is NSNull else { return ["garbage: shutdown"] }
            client.notify("exit")
            return []
        } catch {
            return ["garbage: \(error)"]
        }
    }

    @Test func eightClientsAtOnceEachInItsOwnSession() throws {
        // One client starts a large copy, then vanishes in the middle of it.
        let (server, leaver, _) = try copyUnderWay()

        let problems = ProblemList()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            switch index {
            case 7: leaver.disconnect()
            case 6: problems.add(garbageClient())
            default: problems.add(ordinaryClient(index))
            }
        }
        #expect(problems.all.isEmpty, "\(problems.all)")
        #expect(server.isRunning)

        // The copy was cancelled when its client went: nothing of it is left, hidden or not.
        // The partial goes before the audit line is written (once the operation has returned):
        // wait for both, or a fast (release) build reads the log in between.
        let cancelledCopy = #""method":"copy","outcome":"cancelled","paths":["files:/big.bin","files:/Download"]"#
        func audit() -> String { directory.contents("container/Library/Application Support/AppData/logs/audit.jsonl") ?? "" }
        let deadline = Date().addingTimeInterval(30)
        while (!directory.names(user("Download")).isEmpty || !audit().contains(cancelledCopy)) && Date() < deadline {
            usleep(20_000)
        }
        #expect(directory.names(user("Download")).isEmpty)
        #expect(audit().contains(cancelledCopy))
        for index in 0..<6 { #expect(directory.contents(user("client \(index)/笔记.txt")) == "note \(index)") }
        // Uploads were each committed by the session that began them; none is left behind.
        #expect(directory.names("container/Library/Caches/Downloading") == ["CACHEDIR.TAG"])

        // A new client after all that is served as the first was.
        let late = try RPCSocketClient(path: socketPath)
        #expect(result(try late.initialize()) != nil)
        #expect(result(try late.call("files/stat", ["path": "/client 1/up.bin"]))?["size"] as? Int == 3)

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    /// A client that sends thousands of requests and reads none of the answers: the server
    /// stops reading from it, and serves everyone else as before.
    @Test func aFloodingClientHoldsUpOnlyItself() throws {
        _ = try CofferBinary.run(["--container", container, "-c", "ls"])
        let server = try listen()
        let flooder = RPCSocketClient.connect(socketPath)
        #expect(flooder >= 0)
        let initialize = Data(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#.utf8) + Data("\n".utf8)
        let stat = Data(#"{"jsonrpc":"2.0","id":1,"method":"files/stat","params":{"path":"/"}}"#.utf8) + Data("\n".utf8)
        let flood = initialize + (0..<20_000).reduce(into: Data()) { data, _ in data.append(stat) }
        // Its writes block once the server stops reading it: send them from a thread of their own.
        let sentAll = ProblemList()
        let sender = Thread {
            flood.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let sent = send(flooder, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if sent <= 0 { return }
                    offset += sent
                }
                sentAll.add(["all sent"])
            }
        }
        sender.start()
        usleep(300_000)
        let polite = try RPCSocketClient(path: socketPath)
        try polite.initialize()
        for index in 0..<50 {
            #expect(result(try polite.call("files/createDirectory", ["path": "/polite \(index)"], timeout: 10)) != nil)
        }
        // 1.4 MB of requests do not fit in the socket's buffers: had the server kept reading
        // (and queueing answers nobody reads), all of them would have been sent by now.
        #expect(sentAll.all.isEmpty)
        #expect(server.isRunning)
        // Nor does it keep the server from stopping, though its answers can never be written.
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
        shutdown(flooder, Int32(SHUT_RDWR))
        close(flooder)
    }

    @Test func sessionsAreSeparate() throws {
        _ = try CofferBinary.run(["--container", container, "-c", "ls"])
        let server = try listen()
        let first = try RPCSocketClient(path: socketPath)
        let second = try RPCSocketClient(path: socketPath)
        try first.initialize()
        // Each connection has its own lifecycle: the second is not initialized yet.
        #expect(errorCode(try second.call("files/stat", ["path": "/"])) == -32002)
        try second.initialize(locale: "zh-Hans")
        // Uploads are their session's own.
        let upload = result(try first.call("files/upload/begin", ["path": "/u.bin"]))?["uploadId"] as? String ?? ""
        #expect(errorKind(try second.call("files/upload/commit", ["uploadId": upload])) == "notFoundUpload")
        // One client's shutdown and exit end that client only.
        _ = try first.call("shutdown")
        first.notify("exit")
        #expect(result(try second.call("files/stat", ["path": "/"])) != nil)
        // The first session ended: its unfinished upload is gone.
        let deadline = Date().addingTimeInterval(10)
        while directory.names("container/Library/Caches/Downloading").count > 1 && Date() < deadline { usleep(10_000) }
        #expect(directory.names("container/Library/Caches/Downloading") == ["CACHEDIR.TAG"])
        // A client that finishes sending still gets its answers.
        let ids = (0..<20).map { _ in second.sendRequest("files/stat", ["path": "/"]) }
        second.closeInput()
        for id in ids { #expect(result(try second.response(to: id)) != nil) }
        server.signal(SIGINT)
        #expect(try server.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    @Test func stoppingCancelsWhatIsRunningAndLeavesNothing() throws {
        let (server, client, copy) = try copyUnderWay()
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        // The copy was answered as cancelled before the connection closed, and left nothing.
        #expect(errorCode(try client.response(to: copy)) == -32800)
        #expect(directory.names(user("Download")).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    // MARK: The socket file

    @Test func theSocketIsTheOwnersAloneAndGoesAwayAtTheEnd() throws {
        let server = try listen()
        var info = stat()
        #expect(lstat(socketPath, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o600)
        // A second server on the same socket is refused while the first lives.
        let second = try CofferBinary.run(["--container", container, "rpc", "--listen", "unix:\(socketPath)"])
        #expect(second.status == 2)
        #expect(second.errors.contains("already listening"))
        // It said it was ready, on standard output, as serve and mcp --listen do.
        expectSaidReady(server)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        #expect(lstat(socketPath, &info) != 0)
        // Nothing of it is left: not the socket, not its lock file (issue 48).
        #expect(lstat(socketPath + ".lock", &info) != 0)
        // And the next server takes the path again.
        let next = try listen()
        next.signal(SIGTERM)
        #expect(try next.waitForExit() == 0)
        #expect(lstat(socketPath + ".lock", &info) != 0)
    }

    @Test func somethingElseAtThePathIsNeverReplaced() throws {
        directory.make(["rpc.sock": "precious"])
        let result = try CofferBinary.run(["--container", container, "rpc", "--listen", "unix:\(socketPath)"])
        #expect(result.status == 2)
        #expect(result.errors.contains("is not a socket"))
        #expect(directory.contents("rpc.sock") == "precious")
        #expect(!FileManager.default.fileExists(atPath: container))  // refused before anything was made
        directory.make(["folder/": ""])
        let folder = try CofferBinary.run(["--container", container, "rpc", "--listen", "unix:\(directory.url("folder"))"])
        #expect(folder.status == 2)
        #expect(FileManager.default.fileExists(atPath: directory.url("folder")))
        for bad in ["tcp:1234", "unix:", String(repeating: "x", count: 200)] {
            #expect(try CofferBinary.run(["--container", container, "rpc", "--listen", bad]).status == 2)
        }
        let long = try CofferBinary.run(["--container", container, "rpc", "--listen", "unix:/tmp/" + String(repeating: "s", count: 120)])
        #expect(long.status == 2)
        #expect(long.errors.contains("longer than 107 bytes"))
    }

    /// A SIGTERM sent as soon as the socket accepts stops the server. Dispatch installs its
    /// signal handler on a thread of its own; a server that began serving before it was in
    /// place ignored such a signal and kept running (about one start in twelve, seen as a
    /// CI failure of the tests below).
    @Test func aSigtermJustAfterStartingStopsTheServer() throws {
        for _ in 0..<20 {
            let server = try listen()
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 10) == 0)
        }
    }

    @Test func aStaleSocketOfAServerThatIsGoneIsReplaced() throws {
        // A server killed outright leaves its socket behind.
        let killed = try listen()
        killed.signal(SIGKILL)
        _ = try killed.waitForExit()
        var info = stat()
        #expect(lstat(socketPath, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK)
        let server = try listen()
        let client = try RPCSocketClient(path: socketPath)
        #expect(result(try client.initialize()) != nil)
        // It said it was ready, on standard output, as serve and mcp --listen do.
        expectSaidReady(server)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        #expect(lstat(socketPath, &info) != 0)
        // Nothing of it is left: not the socket, not its lock file (issue 48).
        #expect(lstat(socketPath + ".lock", &info) != 0)
        // And the next server takes the path again.
        let next = try listen()
        next.signal(SIGTERM)
        #expect(try next.waitForExit() == 0)
        #expect(lstat(socketPath + ".lock", &info) != 0)
    }
}

/// What the clients of a test found wrong, gathered from several threads.
final class ProblemList: @unchecked Sendable {
    private let lock = NSLock()
    private var problems: [String] = []
    func add(_ more: [String]) { lock.withLock { problems += more } }
    var all: [String] { lock.withLock { problems } }
}
