import CofferTestSupport
import Foundation
import Testing

func result(_ response: [String: Any]) -> [String: Any]? { response["result"] as? [String: Any] }
func errorCode(_ response: [String: Any]) -> Int? { (response["error"] as? [String: Any])?["code"] as? Int }
func errorMessage(_ response: [String: Any]) -> String? { (response["error"] as? [String: Any])?["message"] as? String }
func errorKind(_ response: [String: Any]) -> String? {
    ((response["error"] as? [String: Any])?["data"] as? [String: Any])?["kind"] as? String
}

/// `coffer rpc` over pipes: the lifecycle, every method, errors, batches, framing, limits.
@Suite(.serialized, .ownsProcesses)
struct RPCEndToEndTests {
    let directory = TemporaryDirectory("e2e-rpc")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }

    func server(_ framing: RPCProcess.Framing = .ndjson, _ arguments: [String] = []) throws -> RPCProcess {
        try RPCProcess(container: container, framing: framing, arguments: arguments)
    }

    // MARK: Lifecycle

    /// Answers written on the reader's thread wait while more requests are buffered: they
    /// must still go out before `shutdown`'s answer, and before the end at `exit`.
    @Test func answersToRequestsSentTogetherComeBeforeShutdownAndExit() throws {
        let lines = [#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#]
            + (2...40).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"files/stat","params":{"path":"/"}}"# }
            + [#"{"jsonrpc":"2.0","id":41,"method":"shutdown"}"#, #"{"jsonrpc":"2.0","method":"exit"}"#]
        let result = try CofferBinary.run(["--container", container, "rpc"], input: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0)
        let ids = result.output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
        }
        #expect(Set(ids) == Set(1...41), "\(ids)")
        #expect(ids.last == 41)
        // Without shutdown: the end comes after every answer too.
        let quick = try CofferBinary.run(["--container", container, "rpc"],
                                         input: [lines[0], lines[1], #"{"jsonrpc":"2.0","method":"exit"}"#].joined(separator: "\n") + "\n")
        #expect(quick.output.contains(#""id":2,"result""#), "\(quick.output)")
    }

    @Test(arguments: [RPCProcess.Framing.ndjson, .lsp])
    func theLifecycleIsTheLanguageServerProtocols(framing: RPCProcess.Framing) throws {
        let rpc = try server(framing)
        #expect(errorCode(try rpc.call("files/stat", ["path": "/"])) == -32002)
        rpc.notify("initialized")
        let initialized = try #require(result(try rpc.initialize()))
        #expect(initialized["protocolVersion"] as? Int == 1)
        #expect((initialized["serverInfo"] as? [String: Any])?["name"] as? String == "coffer")
        let mounts = try #require(initialized["mounts"] as? [[String: Any]])
        #expect(mounts.map { $0["name"] as? String } == ["files", "trash"])
        #expect(mounts.map { $0["writable"] as? Bool } == [true, false])
        let limits = try #require(initialized["limits"] as? [String: Int])
        #expect(limits["maxInlineBytes"] == 8 << 20)
        #expect(limits["maxMessageBytes"]! > limits["maxInlineBytes"]! * 4 / 3)
        #expect((initialized["hostAccess"] as? [String])?.isEmpty == true)
        #expect(errorCode(try rpc.initialize()) == -32600)
        rpc.notify("initialized")
        #expect(result(try rpc.call("files/stat", ["path": "/"]))?["kind"] as? String == "folder")
        #expect(try rpc.call("shutdown")["result"] is NSNull)
        #expect(errorCode(try rpc.call("files/stat", ["path": "/"])) == -32600)
        rpc.notify("exit")
        #expect(try rpc.waitForExit() == 0)
        #expect(rpc.badHeaders.isEmpty)
    }

    @Test func badAllowHostFoldersAreRefusedAtStart() throws {
        directory.make(["file.txt": "x"])
        for folder in [directory.url("missing"), directory.url("file.txt")] {
            let result = try CofferBinary.run(["--container", container, "rpc", "--allow-host", folder])
            #expect(result.status == 2)
            #expect(result.errors.hasPrefix("coffer: --allow-host “\(folder)”: "))
            #expect(result.output.isEmpty)
        }
        #expect(try CofferBinary.run(["--container", container, "rpc", "--framing", "xml"]).status == 2)
    }

    @Test func exitWithoutShutdownIsAFailure() throws {
        let rpc = try server()
        try rpc.initialize()
        rpc.notify("exit")
        #expect(try rpc.waitForExit() == 1)
    }

    @Test func theEndOfInputFinishesWhatWasAskedThenExits() throws {
        directory.make([user("a.txt"): "a"])
        let rpc = try server()
        rpc.sendRequest("initialize", [:])
        let copy = rpc.sendRequest("files/copy", ["path": "/a.txt", "toDirectory": "/Download"])
        rpc.closeInput()
        #expect(result(try rpc.response(to: copy))?["path"] as? String == "files:/Download/a.txt")
        #expect(try rpc.waitForExit() == 0)
        #expect(directory.contents(user("Download/a.txt")) == "a")
    }

    // MARK: Methods

    @Test func filesMethods() throws {
        let rpc = try server()
        try rpc.initialize()
        let folder = try #require(result(try rpc.call("files/createDirectory", ["path": "/Projects/报告 2026", "intermediate": true])))
        #expect(folder["path"] as? String == "files:/Projects/报告 2026")
        #expect(folder["size"] == nil)
        let written = try #require(result(try rpc.call("files/write", ["path": "/Projects/报告 2026/a.txt", "data": "年度 annual"])))
        #expect(written["size"] as? Int == 13)
        #expect(written["type"] as? String == "public.plain-text")
        let modified = try #require(written["modified"] as? String)
        #expect(modified.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
        _ = try rpc.call("files/write", ["path": "/Projects/b.bin", "data": "AAEC/w==", "encoding": "base64"])
        #expect(directory.contents(user("Projects/报告 2026/a.txt")) == "年度 annual")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.url(user("Projects/b.bin")))) == Data([0, 1, 2, 255]))

        let listing = try #require(result(try rpc.call("files/list", ["path": "/Projects"])))
        #expect(listing["total"] as? Int == 2)
        #expect((listing["entries"] as? [[String: Any]])?.map { $0["name"] as? String } == ["报告 2026", "b.bin"])
        let page = try #require(result(try rpc.call("files/list", ["path": "/Projects", "offset": 1, "limit": 5, "sort": "size", "descending": true])))
        #expect((page["entries"] as? [[String: Any]])?.map { $0["name"] as? String } == ["b.bin"])
        // Whether a node has a thumbnail travels with it, decided by the server's one rule
        // (images and PDFs): the web page draws by it (issue 49).
        _ = try rpc.call("files/createDirectory", ["path": "/Pictures"])
        _ = try rpc.call("files/write", ["path": "/Pictures/p.png", "data": "iVBORw0KGgo=", "encoding": "base64"])
        _ = try rpc.call("files/write", ["path": "/Pictures/n.txt", "data": "no"])
        let withImage = try #require(result(try rpc.call("files/list", ["path": "/Pictures"]))?["entries"] as? [[String: Any]])
        #expect(withImage.filter { $0["thumbnail"] as? Bool == true }.map { $0["name"] as? String } == ["p.png"])
        #expect(result(try rpc.call("files/stat", ["path": "/Pictures/p.png"]))?["thumbnail"] as? Bool == true)

        let renamed = try #require(result(try rpc.call("files/rename", ["path": "/Projects/b.bin", "newName": "c.bin"])))
        #expect(renamed["path"] as? String == "files:/Projects/c.bin")
        let moved = try #require(result(try rpc.call("files/move", ["path": "/Projects/c.bin", "toDirectory": "/Download"])))
        #expect(moved["path"] as? String == "files:/Download/c.bin")
        _ = try rpc.call("files/copy", ["path": "/Download/c.bin", "toDirectory": "/Projects"])
        let second = try #require(result(try rpc.call("files/copy", ["path": "/Download/c.bin", "toDirectory": "/Projects"])))
        #expect(second["name"] as? String == "c (2).bin")  // keep both is the default for copy
        #expect(errorKind(try rpc.call("files/move", ["path": "/Projects/c.bin", "toDirectory": "/Download"])) == "fileExists")

        let text = try #require(result(try rpc.call("files/read", ["path": "/Projects/报告 2026/a.txt", "encoding": "text"])))
        #expect(text["data"] as? String == "年度 annual")
        #expect(text["charset"] as? String == "UTF-8")
        #expect(text["eof"] as? Bool == true)
        // A range that would cut 度 in half stops before it.
        let cut = try #require(result(try rpc.call("files/read", ["path": "/Projects/报告 2026/a.txt", "encoding": "text", "length": 4])))
        #expect(cut["data"] as? String == "年")
        #expect(cut["bytes"] as? Int == 3)
        #expect(cut["eof"] as? Bool == false)
        let bytes = try #require(result(try rpc.call("files/read", ["path": "/Download/c.bin", "offset": 2])))
        #expect(bytes["data"] as? String == "Av8=")
        #expect(bytes["encoding"] as? String == "base64")
        #expect(bytes["size"] as? Int == 4)

        let trashed = try #require(result(try rpc.call("files/trash", ["path": "/Download/c.bin"])))
        #expect(trashed["originalPath"] as? String == "files:/Download/c.bin")
        let trashID = try #require(trashed["trashId"] as? String)
        let items = try #require(result(try rpc.call("trash/list"))?["items"] as? [[String: Any]])
        #expect(items.map { $0["trashId"] as? String } == [trashID])
        #expect(items.first?["kind"] as? String == "file")
        let restored = try #require(result(try rpc.call("trash/restore", ["trashId": trashID])))
        #expect(restored["path"] as? String == "files:/Download/c.bin")
        _ = try rpc.call("files/trash", ["path": "/Download/c.bin"])
        #expect(result(try rpc.call("trash/empty", ["olderThanDays": 1]))?["removed"] as? Int == 0)
        #expect(result(try rpc.call("trash/empty"))?["removed"] as? Int == 1)

        let type = try #require(result(try rpc.call("types/describe", ["identifier": "public.png"])))
        #expect(type["extensions"] as? [String] == ["png"])
        #expect((type["conformsTo"] as? [String])?.contains("public.image") == true)
        directory.make([user("fake.png"): "text\n"])
        let detected = try #require(result(try rpc.call("types/describe", ["path": "/fake.png"]))?["detected"] as? [String: Any])
        #expect(detected["mismatch"] as? Bool == true)
        #expect(detected["byContent"] as? String == "public.plain-text")
    }

    @Test func uploadsAreInvisibleUntilCommittedAndGoneWhenAborted() throws {
        let rpc = try server()
        try rpc.initialize()
        let begun = try #require(result(try rpc.call("files/upload/begin", ["path": "/Download/big.bin", "size": 6])))
        let id = try #require(begun["uploadId"] as? String)
        #expect(result(try rpc.call("files/upload/append", ["uploadId": id, "offset": 0, "data": "YWJj"]))?["received"] as? Int == 3)
        #expect(errorKind(try rpc.call("files/upload/append", ["uploadId": id, "offset": 0, "data": "YWJj"])) == "invalidArgument")
        _ = try rpc.call("files/upload/append", ["uploadId": id, "offset": 3, "data": "ZGVm"])
        #expect(directory.names(user("Download")).isEmpty)  // hidden names included
        #expect(errorKind(try rpc.call("files/upload/append", ["uploadId": id, "offset": 6, "data": "eA=="])) == "tooLarge")
        let node = try #require(result(try rpc.call("files/upload/commit", ["uploadId": id])))
        #expect(node["size"] as? Int == 6)
        #expect(directory.contents(user("Download/big.bin")) == "abcdef")
        #expect(errorKind(try rpc.call("files/upload/commit", ["uploadId": id])) == "notFoundUpload")

        let other = try #require(result(try rpc.call("files/upload/begin", ["path": "/Download/x.bin"]))?["uploadId"] as? String)
        _ = try rpc.call("files/upload/append", ["uploadId": other, "offset": 0, "data": "YWJj"])
        #expect(try rpc.call("files/upload/abort", ["uploadId": other])["result"] is NSNull)
        #expect(directory.names("container/Library/Caches/Downloading") == ["CACHEDIR.TAG"])
        // One left open when the input ends is removed too.
        let open = try #require(result(try rpc.call("files/upload/begin", ["path": "/Download/y.bin"]))?["uploadId"] as? String)
        _ = try rpc.call("files/upload/append", ["uploadId": open, "offset": 0, "data": "YWJj"])
        #expect(directory.names("container/Library/Caches/Downloading").count == 2)
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 0)
        #expect(directory.names("container/Library/Caches/Downloading") == ["CACHEDIR.TAG"])
        #expect(!directory.exists(user("Download/y.bin")))
    }

    @Test func hostMethodsOnlyReachAllowedFolders() throws {
        directory.make(["allowed/in.txt": "in", "outside/out.txt": "out", "allowed/Out/": ""])
        let rpc = try server(.ndjson, ["--allow-host", directory.url("allowed")])
        let initialized = try #require(result(try rpc.initialize()))
        let canonical = realpath(directory.url("allowed"), nil).map { String(cString: $0) } ?? ""
        #expect(initialized["hostAccess"] as? [String] == [canonical])

        let imported = try #require(result(try rpc.call("host/import", [
            "hostPaths": [directory.url("allowed/in.txt"), directory.url("outside/out.txt")], "workDoneToken": 7,
        ]))?["results"] as? [[String: Any]])
        #expect((imported[0]["node"] as? [String: Any])?["path"] as? String == "files:/Import/in.txt")
        #expect((imported[1]["error"] as? [String: Any])?["kind"] as? String == "hostAccessDenied")
        #expect(rpc.notifications("$/progress").map { ($0["value"] as? [String: Any])?["kind"] as? String }.first == "begin")
        #expect(rpc.notifications("$/progress").allSatisfy { $0["token"] as? Int == 7 })

        let exported = try #require(result(try rpc.call("host/export", ["path": "/Import/in.txt", "hostDirectory": directory.url("allowed/Out")])))
        #expect(exported["hostPath"] as? String == canonical + "/Out/in.txt")
        #expect(errorKind(try rpc.call("host/export", ["path": "/Import/in.txt", "hostDirectory": directory.url("outside")])) == "hostAccessDenied")

        let opened = try #require(result(try rpc.call("host/open", ["hostPath": directory.url("allowed/in.txt")])))
        #expect(opened["bookmarkId"] as? Int == 1)
        #expect((opened["node"] as? [String: Any])?["type"] as? String == "public.plain-text")
        try FileManager.default.removeItem(atPath: directory.url("allowed/in.txt"))
        let bookmarks = try #require(result(try rpc.call("bookmarks/list"))?["bookmarks"] as? [[String: Any]])
        #expect(bookmarks.map { $0["stale"] as? Bool } == [true])
        // The same state the REPL's `bookmarks` shows, with why.
        #expect(bookmarks.first?["state"] as? String == "stale")
        #expect((bookmarks.first?["problem"] as? String)?.contains("was deleted or replaced") == true, "\(bookmarks)")
    }

    @Test func noHostAccessWithoutAllowHost() throws {
        directory.make(["outside/out.txt": "out"])
        let rpc = try server()
        try rpc.initialize()
        #expect(errorKind(try rpc.call("host/open", ["hostPath": directory.url("outside/out.txt")])) == "hostAccessDenied")
        let imported = try #require(result(try rpc.call("host/import", ["hostPaths": [directory.url("outside/out.txt")]]))?["results"] as? [[String: Any]])
        #expect((imported[0]["error"] as? [String: Any])?["kind"] as? String == "hostAccessDenied")
    }

    // MARK: Errors

    @Test func failuresCarryTheirKindAndAMessageInTheSessionsLanguage() throws {
        directory.make([user("a.txt"): "a", user("Folder/x.txt"): "x"])
        try Data([0x89, 0x50, 0x4E, 0x47, 0, 0, 0, 0]).write(to: URL(fileURLWithPath: directory.url(user("p.png"))))
        let rpc = try server()
        try rpc.initialize(locale: "zh-Hans")
        let missing = try rpc.call("files/stat", ["path": "/nope.txt"])
        #expect(errorCode(missing) == -32803)
        #expect(errorMessage(missing) == "“files:/nope.txt” 不存在。")
        let data = try #require((missing["error"] as? [String: Any])?["data"] as? [String: Any])
        #expect(data["path"] as? String == "files:/nope.txt")
        #expect((data["suggestion"] as? String)?.isEmpty == false)

        let cases: [(String, [String: Any], String)] = [
            ("files/createDirectory", ["path": "/Folder"], "fileExists"),
            ("files/list", ["path": "/a.txt"], "notADirectory"),
            ("files/read", ["path": "/Folder"], "isADirectory"),
            ("files/rename", ["path": "/a.txt", "newName": "x/y"], "invalidName"),
            ("files/stat", ["path": "/../etc"], "outsideSandbox"),
            ("files/write", ["path": "trash:/x.txt", "data": "x"], "readOnly"),
            ("files/read", ["path": "/p.png", "encoding": "text"], "unsupported"),
            ("files/stat", ["path": "nomount:/x"], "unknownMount"),
            ("files/upload/append", ["uploadId": "nope", "offset": 0, "data": ""], "notFoundUpload"),
            ("files/copy", ["path": "/Folder", "toDirectory": "/Folder"], "invalidOperation"),
            ("files/write", ["path": "/big.txt", "data": String(repeating: "x", count: (8 << 20) + 1)], "tooLarge"),
        ]
        for (method, params, kind) in cases {
            let response = try rpc.call(method, params)
            #expect(errorCode(response) == -32803, "\(method) \(params.keys.sorted())")
            #expect(errorKind(response) == kind, "\(method)")
        }
        let filtered = try #require(result(try rpc.call("host/import", ["hostPaths": ["/etc/hostname"], "allowedTypes": ["public.image"]])))
        #expect(((filtered["results"] as? [[String: Any]])?.first?["error"] as? [String: Any])?["kind"] as? String == "hostAccessDenied")
        #expect(!directory.exists(user("big.txt")))
    }

    @Test func aFullDiskFailsTheWriteAndLeavesNothing() throws {
        _ = try CofferBinary.run(["--container", container, "-c", "ls"])
        // Writes past 512 KiB fail with EFBIG, as a full disk would with ENOSPC.
        let rpc = try RPCProcess(container: container, launcher: ["/bin/sh", "-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\""])
        try rpc.initialize()
        let data = Data(repeating: 7, count: 2 << 20).base64EncodedString()
        let response = try rpc.call("files/write", ["path": "/Download/big.bin", "data": data, "encoding": "base64"])
        #expect(errorKind(response) == "outOfSpace")
        #expect(errorMessage(response) == "There isn't enough space to write “files:/Download/big.bin”.")
        #expect(directory.names(user("Download")).isEmpty)
        #expect(result(try rpc.call("files/write", ["path": "/Download/small.txt", "data": "fits"])) != nil)
    }

    @Test func badParamsAreNamed() throws {
        let rpc = try server()
        try rpc.initialize()
        let missing = try rpc.call("files/stat", [:])
        #expect(errorCode(missing) == -32602)
        #expect(errorMessage(missing)?.contains("“path”") == true)
        let mistyped = try rpc.call("files/list", ["path": "/", "limit": "ten"])
        #expect(errorCode(mistyped) == -32602)
        #expect(errorMessage(mistyped)?.contains("“limit”") == true)
        let conflict = try rpc.call("files/rename", ["path": "/Download", "newName": "D", "conflict": "overwrite"])
        #expect(errorCode(conflict) == -32602)
        #expect(errorMessage(conflict)?.contains("“conflict”") == true)
        #expect(errorCode(try rpc.call("files/nothing")) == -32601)
        rpc.send(["jsonrpc": "2.0", "id": 99, "method": "files/stat", "params": ["/"]])
        #expect(errorCode(try rpc.response(to: 99)) == -32602)
    }

    @Test func idsAreEchoedExactly() throws {
        let rpc = try server()
        try rpc.initialize()
        for id in ["abc", "", "报告"] as [Any] + [0, -5, 9_007_199_254_740_993, 1.5] as [Any] {
            rpc.send(["jsonrpc": "2.0", "id": id, "method": "files/stat", "params": ["path": "/"]])
            #expect(result(try rpc.response(to: id)) != nil, "\(id)")
        }
        #expect(rpc.frames.contains { String(decoding: $0, as: UTF8.self).contains(#""id":9007199254740993,"#) })
        rpc.sendRaw(Data(#"{"jsonrpc":"2.0","id":true,"method":"files/stat","params":{"path":"/"}}"#.utf8) + Data("\n".utf8))
        let invalid = try rpc.waitFor("an invalid-request error") { message -> [String: Any]? in
            guard let object = message as? [String: Any], errorCode(object) == -32600, object["id"] is NSNull else { return nil }
            return object
        }
        #expect(errorMessage(invalid)?.contains("id") == true)
    }

    // MARK: Batches

    @Test func batchesAnswerEveryRequestAndNoNotification() throws {
        let rpc = try server()
        try rpc.initialize()
        rpc.send([
            ["jsonrpc": "2.0", "id": "a", "method": "files/stat", "params": ["path": "/"]],
            ["jsonrpc": "2.0", "method": "initialized"],
            ["jsonrpc": "2.0", "id": "b", "method": "files/stat", "params": ["path": "/nope"]],
            ["jsonrpc": "2.0", "id": "c", "method": "no/such"],
            42,
        ] as [Any])
        let batch = try rpc.waitFor("a batch response") { $0 as? [[String: Any]] }
        #expect(batch.count == 4)
        let byID = Dictionary(batch.compactMap { item in (item["id"] as? String).map { ($0, item) } }, uniquingKeysWith: { a, _ in a })
        #expect(result(byID["a"] ?? [:]) != nil)
        #expect(errorKind(byID["b"] ?? [:]) == "noSuchFile")
        #expect(errorCode(byID["c"] ?? [:]) == -32601)
        #expect(batch.contains { errorCode($0) == -32600 && $0["id"] is NSNull })

        rpc.send([["jsonrpc": "2.0", "method": "initialized"], ["jsonrpc": "2.0", "method": "initialized"]] as [Any])
        rpc.send([] as [Any])
        let empty = try rpc.waitFor("an empty-batch error") { message -> [String: Any]? in
            guard let object = message as? [String: Any], errorCode(object) == -32600 else { return nil }
            return object
        }
        #expect(errorMessage(empty)?.contains("empty") == true)
        #expect(rpc.received.filter { $0 is [Any] }.count == 1)  // the notifications-only batch got nothing
    }

    // MARK: Concurrency, progress, cancellation

    @Test func aLongCopyDoesNotHoldUpOtherRequestsAndCancelsCleanly() throws {
        _ = try CofferBinary.run(["--container", container, "-c", "ls"])
        try directory.makeSparseFile(user("big.bin"), gigabytes: 6)
        let rpc = try server()
        try rpc.initialize()
        let copy = rpc.sendRequest("files/copy", ["path": "/big.bin", "toDirectory": "/Download", "workDoneToken": "copy-1"])
        _ = try rpc.waitFor("a progress report") { message -> Bool? in
            guard let object = message as? [String: Any], object["method"] as? String == "$/progress",
                  ((object["params"] as? [String: Any])?["value"] as? [String: Any])?["kind"] as? String == "report"
            else { return nil }
            return true
        }
        // Hundreds of requests in flight while the copy runs: all answered, the copy still going.
        let ids = (0..<300).map { index in rpc.sendRequest("files/stat", ["path": index % 2 == 0 ? "/" : "/big.bin"]) }
        for id in ids { #expect(result(try rpc.response(to: id)) != nil) }
        #expect(!rpc.received.contains { ($0 as? [String: Any]).map { RPCProcess.sameID($0["id"], copy) } ?? false })

        rpc.notify("$/cancelRequest", ["id": copy])
        let cancelled = try rpc.response(to: copy)
        #expect(errorCode(cancelled) == -32800)
        #expect(directory.names(user("Download")).isEmpty)  // no partial file, hidden or not
        let kinds = rpc.notifications("$/progress").compactMap { ($0["value"] as? [String: Any])?["kind"] as? String }
        #expect(kinds.first == "begin")
        #expect(kinds.last == "end")
        #expect(kinds.dropFirst().dropLast().allSatisfy { $0 == "report" })
        let audit = directory.contents("container/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        #expect(audit.contains(#""method":"copy","outcome":"cancelled","paths":["files:/big.bin","files:/Download"]"#))
    }

    // MARK: Malformed input

    @Test func malformedInputGetsAnErrorAndTheConnectionLivesOn() throws {
        let rpc = try server()
        try rpc.initialize()
        func expectAlive(_ label: String) throws {
            let response = try rpc.call("files/stat", ["path": "/"])
            #expect(result(response) != nil, "after \(label)")
        }
        /// Sends `bytes` and waits for a new error with `code` and a null id. What was received
        /// is counted before sending, so a fast answer cannot be missed.
        func expectError(_ code: Int, after label: String, sending bytes: Data) throws {
            let before = rpc.received.count
            rpc.sendRaw(bytes)
            _ = try rpc.waitFor("error \(code) after \(label)") { _ -> Bool? in
                rpc.received.dropFirst(before).contains { message in
                    (message as? [String: Any]).map { errorCode($0) == code && $0["id"] is NSNull } ?? false
                } ? true : nil
            }
        }
        try expectError(-32700, after: "garbage", sending: Data("this is not json\n".utf8))
        try expectAlive("garbage")
        try expectError(-32700, after: "invalid UTF-8", sending: Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D, 0x0A]))
        try expectAlive("invalid UTF-8")
        try expectError(-32700, after: "deep nesting", sending: Data((String(repeating: "[", count: 100_000) + "\n").utf8))
        try expectAlive("deep nesting")
        rpc.sendRaw(Data((#"{"jsonrpc":"2.0","id":1}"# + "\n").utf8))
        _ = try rpc.waitFor("a missing method") { ($0 as? [String: Any]).flatMap { errorCode($0) == -32600 && RPCProcess.sameID($0["id"], 1) ? true : nil } }
        // 17 MiB in one line, over maxMessageBytes: refused without being kept.
        var huge = Data(#"{"jsonrpc":"2.0","id":5,"method":"files/write","params":{"path":"/x","data":""#.utf8)
        huge.append(Data(repeating: UInt8(ascii: "x"), count: 17 << 20))
        huge.append(Data("\"}}\n".utf8))
        try expectError(-32600, after: "an over-long message", sending: huge)
        try expectAlive("an over-long message")
        #expect(!directory.exists(user("x")))
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 0)
    }

    @Test func brokenLSPFramesAreSurvived() throws {
        let rpc = try server(.lsp)
        // Header names in any case, with odd spacing, and a Content-Type.
        let initialize = #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#
        rpc.sendRaw(Data("content-LENGTH :  \(initialize.utf8.count)\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n\(initialize)".utf8))
        #expect(result(try rpc.response(to: 1)) != nil)
        // A Content-Length that is too short: the rest runs into the next header.
        let stat = #"{"jsonrpc":"2.0","id":2,"method":"files/stat","params":{"path":"/"}}"#
        rpc.sendRaw(Data("Content-Length: 10\r\n\r\n\(stat)".utf8))
        rpc.sendRaw(Data("Content-Length: \(stat.utf8.count)\r\n\r\n\(stat)".utf8))
        #expect(result(try rpc.response(to: 2)) != nil)
        // A header block without a length, then a good frame.
        rpc.sendRaw(Data("X-Nothing: here\r\n\r\n".utf8))
        let third = #"{"jsonrpc":"2.0","id":3,"method":"files/stat","params":{"path":"/"}}"#
        rpc.sendRaw(Data("Content-Length: \(third.utf8.count)\r\n\r\n\(third)".utf8))
        #expect(result(try rpc.response(to: 3)) != nil)
        #expect(rpc.received.contains { ($0 as? [String: Any]).map { errorCode($0) == -32700 } ?? false })
        // A frame over maxMessageBytes: skipped by its length, then the next one is read.
        let big = 17 << 20
        rpc.sendRaw(Data("Content-Length: \(big)\r\n\r\n".utf8) + Data(repeating: UInt8(ascii: " "), count: big))
        let fourth = #"{"jsonrpc":"2.0","id":4,"method":"files/stat","params":{"path":"/"}}"#
        rpc.sendRaw(Data("Content-Length: \(fourth.utf8.count)\r\n\r\n\(fourth)".utf8))
        #expect(result(try rpc.response(to: 4)) != nil)
        #expect(rpc.received.contains { ($0 as? [String: Any]).map { errorCode($0) == -32600 && $0["id"] is NSNull } ?? false })
        // Input that ends inside a frame: a clean exit.
        rpc.sendRaw(Data("Content-Length: 100\r\n\r\n{\"jsonrpc\"".utf8))
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 1)
        #expect(rpc.badHeaders.isEmpty)
    }

    // MARK: Audit

    @Test func changesAreAuditedFromBothFrontEnds() throws {
        let rpc = try server()
        try rpc.initialize()
        _ = try rpc.call("files/createDirectory", ["path": "/Audited"])
        _ = try rpc.call("files/createDirectory", ["path": "/Audited"])
        _ = try rpc.call("files/list", ["path": "/"])
        rpc.closeInput()
        _ = try rpc.waitForExit()
        _ = try CofferBinary.run(["--container", container, "-c", "rm Audited"])
        let lines = (directory.contents("container/Library/Application Support/AppData/logs/audit.jsonl") ?? "")
            .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.map { $0["method"] as? String } == ["createFolder", "createFolder", "trash"])
        #expect(lines.map { $0["outcome"] as? String } == ["ok", "fileExists", "ok"])
        #expect(lines.map { $0["frontEnd"] as? String } == ["rpc", "rpc", "repl"])
        #expect(lines.allSatisfy { ($0["paths"] as? [String]) == ["files:/Audited"] })
        #expect(lines.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true })
    }

    /// The same operations asked of the REPL and of the JSON-RPC server, in two containers
    /// that start alike, leave the same audit entries: only the time and the front end differ.
    @Test func theSameOperationFromEitherFrontEndIsAuditedAlike() throws {
        let replContainer = directory.url("repl")
        for root in [container, replContainer] {
            _ = try CofferBinary.run(["--container", root, "-c", "pwd"])
            directory.make([(root as NSString).lastPathComponent + "/Documents/UserFiles/a.txt": "a",
                            (root as NSString).lastPathComponent + "/Documents/UserFiles/b.txt": "b"])
        }
        directory.make(["host/in.txt": "in", "out/": ""])
        let script = [
            "mkdir Docs", "mkdir Docs", "cp a.txt Docs", "cp --keep-both a.txt Docs", "mv b.txt Docs",
            "rename Docs/b.txt c.txt", "rm Docs/c.txt", "restore c.txt", "rm a.txt", "empty-trash --yes",
            "import --into Docs \(directory.url("host/in.txt"))", "export Docs/c.txt \(directory.url("out"))",
            "mkdir ../../escape", "cp Docs/c.txt ../../escape",
        ]
        let repl = try CofferBinary.run(["--container", replContainer], input: script.joined(separator: "\n") + "\n")
        #expect(repl.status == 1)  // the second mkdir and the escapes fail, as they should

        let rpc = try RPCProcess(container: container, arguments: ["--allow-host", directory.url("host"),
                                                                    "--allow-host", directory.url("out")])
        try rpc.initialize()
        let calls: [(String, [String: Any])] = [
            ("files/createDirectory", ["path": "/Docs"]), ("files/createDirectory", ["path": "/Docs"]),
            ("files/copy", ["path": "/a.txt", "toDirectory": "/Docs"]),
            ("files/copy", ["path": "/a.txt", "toDirectory": "/Docs", "conflict": "keepBoth"]),
            ("files/move", ["path": "/b.txt", "toDirectory": "/Docs"]),
            ("files/rename", ["path": "/Docs/b.txt", "newName": "c.txt"]), ("files/trash", ["path": "/Docs/c.txt"]),
            ("trash/restore", ["trashId": "c.txt"]), ("files/trash", ["path": "/a.txt"]), ("trash/empty", [:]),
            ("host/import", ["hostPaths": [directory.url("host/in.txt")], "toDirectory": "/Docs"]),
            ("host/export", ["path": "/Docs/c.txt", "hostDirectory": directory.url("out")]),
            ("files/createDirectory", ["path": "../../escape"]),
            ("files/copy", ["path": "/Docs/c.txt", "toDirectory": "../../escape"]),
        ]
        for (method, params) in calls { _ = try rpc.call(method, params) }
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 0)

        func entries(_ root: String) -> [[String: String]] {
            let log = directory.contents((root as NSString).lastPathComponent + "/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
            return log.split(separator: "\n").compactMap { line in
                guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return ["method": entry["method"] as? String ?? "", "outcome": entry["outcome"] as? String ?? "",
                        "paths": (entry["paths"] as? [String] ?? []).joined(separator: " | ")]
            }
        }
        let fromREPL = entries(replContainer), fromRPC = entries(container)
        #expect(fromREPL.count == 14)
        #expect(fromREPL == fromRPC)
        #expect(fromRPC.map { $0["method"] ?? "" } == ["createFolder", "createFolder", "copy", "copy", "move", "rename",
                                                       "trash", "restore", "trash", "emptyTrash", "import", "export",
                                                       "createFolder", "copy"])
        // Paths that climb out are refused before any operation can be made, and recorded without them.
        #expect(fromRPC.suffix(2).allSatisfy { $0["outcome"] == "outsideSandbox" && $0["paths"] == "" })
        #expect(fromRPC[1]["outcome"] == "fileExists")
        #expect(fromRPC[3]["paths"] == "files:/a.txt | files:/Docs/a (2).txt")
        #expect(fromRPC[7]["paths"] == "trash:/c.txt | files:/Docs/c.txt")
        #expect(fromRPC[10]["paths"] == "files:/Docs/in.txt")
    }
}

/// Downloads from `coffer -c` and `coffer rpc`, from a local server.
@Suite(.ownsProcesses) struct TransferEndToEndTests {
    let directory = TemporaryDirectory("e2e-transfers")
    var container: String { directory.url("container") }

    @Test func theREPLDownloadsListsAndResumes() async throws {
        let web = try TransferServer()
        let done = try await CofferBinary.running(["--container", container, "-c",
                                                   "download \(web.url("/named")); download --name mine.bin \(web.url("/data/x?size=100")); downloads"])
        #expect(done.status == 0, "\(done.errors)")
        #expect(done.output.contains("→ files:/Download/年度报告.txt") && done.output.contains("→ files:/Download/mine.bin"))
        #expect(directory.contents("container/Documents/UserFiles/Download/mine.bin")?.utf8.count == 100)
        #expect(done.output.components(separatedBy: "\tdone\t").count == 3, "\(done.output)")
        // Several at once, each placed as it ends; one that fails does not stop the others.
        let several = try await CofferBinary.running(["--container", container, "-c",
                                                      "download \((1...4).map { web.url("/slow/many\($0)?size=300000") }.joined(separator: " ")) \(web.url("/missing"))"])
        #expect(several.status == 1 && several.errors.contains("404"))
        for index in 1...4 {
            #expect(directory.contents("container/Documents/UserFiles/Download/many\(index)")?.utf8.count == 300_000)
        }
        let failed = try await CofferBinary.running(["--container", container, "--lang", "zh-Hans", "-c", "download \(web.url("/missing"))"])
        #expect(failed.status == 1 && failed.errors.contains("服务器上该地址没有内容（404）"), "\(failed.errors)")
        // A 404 is not tried again by a resume of everything (issue 30: it failed forever)...
        let again = try await CofferBinary.running(["--container", container, "-c", "download --resume"])
        #expect(again.status == 0 && again.output == "Nothing to resume.\n", "\(again.output) \(again.errors)")
        // ...but it is when named, and fails the same way.
        let listed = try await CofferBinary.running(["--container", container, "-c", "downloads"])
        let failedID = try #require(listed.output.split(separator: "\n").first { $0.contains("\tfailed\t") }?
            .split(separator: "\t").first.map(String.init), "\(listed.output)")
        let named = try await CofferBinary.running(["--container", container, "-c", "download --resume \(failedID)"])
        #expect(named.status == 1 && named.errors.contains("404"), "\(named.errors)")
    }

    @Test func rpcDownloadsWithProgressAndLists() async throws {
        let web = try TransferServer()
        let rpc = try RPCProcess(container: container)
        _ = try await rpc.awaitCall("initialize", ["locale": "en"])
        let answer = try await rpc.awaitCall("transfers/download", ["url": web.url("/data/big?size=\(8 << 20)"), "workDoneToken": "t",
                                                                    "name": "big.bin"])
        #expect(result(answer)?["path"] as? String == "files:/Download/big.bin", "\(answer)")
        #expect(!rpc.notifications("$/progress").isEmpty)
        let listed = try #require(result(try await rpc.awaitCall("transfers/list"))?["downloads"] as? [[String: Any]])
        #expect(listed.count == 1 && listed[0]["state"] as? String == "done" && listed[0]["received"] as? Int == 8 << 20)
        let refused = try await rpc.awaitCall("transfers/download", ["url": web.url("/missing")])
        #expect(errorKind(refused) == "noSuchFile")
    }

    @Test(.enabled(if: TransferServer.parsesForms, "needs a Python with python-multipart (COFFER_TEST_PYTHON)"))
    func uploadsFromTheREPLAndRPC() async throws {
        let web = try TransferServer()
        try FileManager.default.createDirectory(atPath: directory.url("container/Documents/UserFiles"), withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: directory.url("container/Documents/UserFiles/照片 1.txt")))
        let sent = try await CofferBinary.running(["--container", container, "-c",
                                                   "upload --form album=2026 --ascii-name original '照片 1.txt' \(web.url("/form"))"])
        #expect(sent.status == 0 && sent.output.contains("files:/照片 1.txt → 200"), "\(sent.output) \(sent.errors)")
        let refused = try await CofferBinary.running(["--container", container, "-c", "upload '照片 1.txt' \(web.url("/missing"))"])
        #expect(refused.status == 1 && refused.errors.contains("404"))
        let rpc = try RPCProcess(container: container)
        _ = try await rpc.awaitCall("initialize", ["locale": "en"])
        let answer = try await rpc.awaitCall("transfers/upload", ["paths": ["/照片 1.txt", "/none.txt"], "url": web.url("/form"),
                                                                  "form": ["k": "v"]])
        let results = try #require(result(answer)?["results"] as? [[String: Any]])
        #expect(results.count == 2 && results[0]["status"] as? Int == 200 && results[1]["error"] != nil)
        let parsed = try JSONSerialization.jsonObject(with: Data((results[0]["answer"] as? String ?? "").utf8)) as? [String: Any]
        #expect((parsed?["fields"] as? [String: String])?["k"] == "v")
        #expect(((parsed?["files"] as? [[String: Any]])?.first?["size"] as? Int) == 5)
    }
}
