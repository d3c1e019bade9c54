import CofferTestSupport
import Foundation
import Testing

/// `find`, `reindex`, `files/search` and `files/watch` through the built binary.
@Suite(.serialized, .ownsProcesses)
struct SearchEndToEndTests {
    let directory = TemporaryDirectory("e2e-search")
    var container: String { directory.url("container") }
    var files: String { directory.url("container/Documents/UserFiles") }

    func coffer(_ commands: String, language: String = "en") throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", language, "-c", commands])
    }

    func fixture() throws {
        _ = try coffer("ls")
        directory.make([
            "container/Documents/UserFiles/Q3-Report.pdf": "",
            "container/Documents/UserFiles/Reports/年度报告.txt": "",
            "container/Documents/UserFiles/Reports/report 10.jpg": "",
            "container/Documents/UserFiles/Reports/report 9.jpg": "",
            "container/Documents/UserFiles/Reports/.report secret": "",
            "container/Documents/UserFiles/Notes/Résumé draft.md": "",
        ])
    }

    @Test func findPrintsOneVirtualPathALineInWalkOrder() throws {
        try fixture()
        for round in ["walk", "index"] {
            if round == "index" {
                let reindex = try coffer("reindex")
                #expect(reindex.status == 0)
                #expect(reindex.output.hasPrefix("Search index: 9 items in 5 folders ("), "\(reindex.output)")
            }
            let result = try coffer("find report")
            #expect(result.status == 0 && result.errors.isEmpty, "\(result.errors)")
            #expect(result.output == """
                files:/Reports
                files:/Reports/report 9.jpg
                files:/Reports/report 10.jpg
                files:/Q3-Report.pdf

                """, "\(round)")
            #expect(try coffer("find 报告").output == "files:/Reports/年度报告.txt\n")
            #expect(try coffer("cd Notes; find resume .").output == "files:/Notes/Résumé draft.md\n")
            #expect(try coffer("find --type public.image rep").output
                    == "files:/Reports/report 9.jpg\nfiles:/Reports/report 10.jpg\n")
            let limited = try coffer("find --limit 1 report")
            #expect(limited.output == "files:/Reports\n")
            #expect(limited.errors.contains("--limit 1"))
            #expect(try coffer("find nothing-like-this").output.isEmpty)
        }
    }

    @Test func anOutsideChangeIsFoundByTheNextCommand() throws {
        try fixture()
        _ = try coffer("reindex")
        directory.make(["container/Documents/UserFiles/Reports/Later report.txt": ""])
        try FileManager.default.removeItem(atPath: files + "/Q3-Report.pdf")
        let found = try coffer("find report")
        #expect(found.output == """
            files:/Reports
            files:/Reports/Later report.txt
            files:/Reports/report 9.jpg
            files:/Reports/report 10.jpg

            """, "\(found.output)")
    }

    /// A folder the walk cannot read is reported, and the walk goes on. Root reads
    /// everything, so the binary runs as nobody then.
    @Test func theWalkReportsFoldersItCannotReadAndGoesOn() throws {
        try fixture()
        directory.make(["container/Documents/UserFiles/Locked/report locked.txt": "",
                        "container/Documents/UserFiles/Open/report open.txt": ""])
        chmod(files + "/Locked", 0)
        defer { chmod(files + "/Locked", 0o755) }
        var launcher: [String] = []
        if getuid() == 0 {
            // The container belongs to the user who runs Coffer: give it to nobody.
            launcher = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            chmod(directory.path, 0o777)
            _ = try TestProcess.run(["/bin/chown", "-R", "65534:65534", container], timeout: 60)
        }
        let result = try CofferBinary.run(["--container", container, "--lang", "en", "-c", "find --walk report"],
                                          launcher: launcher)
        #expect(result.status == 1)
        #expect(result.output == """
            files:/Open/report open.txt
            files:/Reports
            files:/Reports/report 9.jpg
            files:/Reports/report 10.jpg
            files:/Q3-Report.pdf

            """, "\(result.output)")
        #expect(result.errors.hasPrefix("coffer: You don't have permission to use “files:/Locked”."), "\(result.errors)")
        #expect(result.errors.split(separator: "\n").count == 1)
    }

    @Test func badFindsAreExplained() throws {
        try fixture()
        let extra = try coffer("find a . b")
        #expect(extra.status == 1 && extra.errors.contains("usage: find [pattern [path]]"), "\(extra.errors)")
        let file = try coffer("find a Q3-Report.pdf")
        #expect(file.status == 1 && file.errors.contains("is not a folder"), "\(file.errors)")
        let type = try coffer("find --type public.nonsense a", language: "zh")
        #expect(type.status == 1 && type.errors.contains("参数无效"), "\(type.errors)")
    }

    @Test func filesSearchSaysWhichEngineAnswered() throws {
        try fixture()
        _ = try coffer("reindex")
        let rpc = try RPCProcess(container: container)
        _ = try rpc.initialize()
        let all = try #require(result(try rpc.call("files/search", ["query": "REPORT"])))
        #expect(all["engine"] as? String == "index")
        #expect(all["truncated"] as? Bool == false)
        let matches = try #require(all["matches"] as? [[String: Any]])
        #expect(matches.map { $0["path"] as? String } == ["files:/Reports", "files:/Reports/report 9.jpg",
                                                          "files:/Reports/report 10.jpg", "files:/Q3-Report.pdf"])
        #expect(matches.map { $0["kind"] as? String } == ["folder", "file", "file", "file"])
        let limited = try #require(result(try rpc.call("files/search", ["query": "report", "limit": 1, "path": "/Reports"])))
        #expect((limited["matches"] as? [[String: Any]])?.count == 1 && limited["truncated"] as? Bool == true)
        let images = try #require(result(try rpc.call("files/search", ["query": "re", "types": ["public.image"]])))
        #expect((images["matches"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["report 9.jpg", "report 10.jpg"])
        #expect(errorCode(try rpc.call("files/search", ["query": "a", "limit": -1])) == -32602)
        #expect(errorCode(try rpc.call("files/search", ["path": "/"])) == -32602)
        let empty = try rpc.call("files/search", ["query": ""])
        #expect(errorCode(empty) == -32803 && errorKind(empty) == "invalidArgument")
        let notFolder = try rpc.call("files/search", ["query": "a", "path": "/Q3-Report.pdf"])
        #expect(errorKind(notFolder) == "notADirectory")
        rpc.closeInput()
        #expect(try rpc.waitForExit() == 0)
    }

    /// Another process changes files; the client hears of it, then stops hearing after
    /// `files/unwatch`; closing its input ends the server even with a watch running.
    @Test func watchNotificationsComeForChangesByAnotherProcess() throws {
        try fixture()
        let rpc = try RPCProcess(container: container)
        _ = try rpc.initialize()
        let watch = try #require(result(try rpc.call("files/watch", ["path": "/Reports"])))
        let id = try #require(watch["watchId"] as? String)
        let other = try #require(result(try rpc.call("files/watch", ["path": "/Notes/Résumé draft.md"])))
        let otherID = try #require(other["watchId"] as? String)
        #expect(otherID != id)

        try runShell("cd '\(files)/Reports' && mkdir Sub && echo x >> 'report 9.jpg' && mv 'report 10.jpg' 'Sub/moved.jpg' "
                     + "&& rm 年度报告.txt && echo new > new.txt && echo r >> '../Notes/Résumé draft.md'")
        func changes(for watchID: String) -> Set<String> {
            Set(rpc.notifications("files/didChange").filter { $0["watchId"] as? String == watchID }.flatMap { params in
                (params["changes"] as? [[String: Any]] ?? []).map { "\($0["type"] as? String ?? "?") \($0["path"] as? String ?? "?")" }
            })
        }
        let expected: Set = ["created files:/Reports/Sub", "changed files:/Reports/report 9.jpg",
                             "deleted files:/Reports/report 10.jpg", "deleted files:/Reports/年度报告.txt",
                             "created files:/Reports/new.txt"]
        _ = try rpc.waitFor(timeout: 5, "the changes") { _ in changes(for: id).isSuperset(of: expected) ? true : nil }
        _ = try rpc.waitFor(timeout: 5, "the file's change") { _ in
            changes(for: otherID) == ["changed files:/Notes/Résumé draft.md"] ? true : nil
        }
        #expect(changes(for: id).isSubset(of: expected.union(["created files:/Reports/Sub/moved.jpg"])), "\(changes(for: id))")

        #expect(try rpc.call("files/unwatch", ["watchId": id])["result"] is NSNull)
        #expect(errorCode(try rpc.call("files/unwatch", ["watchId": id])) == -32602)
        let before = rpc.notifications("files/didChange").count
        try runShell("echo more > '\(files)/Reports/after.txt'")
        Thread.sleep(forTimeInterval: 0.4)
        #expect(rpc.notifications("files/didChange").count == before)
        #expect(errorKind(try rpc.call("files/watch", ["path": "/missing"])) == "noSuchFile")
        #expect(errorKind(try rpc.call("files/watch", ["path": "trash:/"])) == "unsupported")
        rpc.closeInput()
        #expect(try rpc.waitForExit(timeout: 5) == 0)
    }

    func runShell(_ script: String) throws {
        let shell = try TestProcess.run(["/bin/sh", "-c", script], timeout: 60)
        #expect(shell.status == 0, "\(shell.errorText)")
    }
}
