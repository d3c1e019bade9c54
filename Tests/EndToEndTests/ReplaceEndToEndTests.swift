import CofferTestSupport
import Foundation
import Testing

/// Issue 30 through the built binary (CI runs these against the release build as well): a
/// replace never deletes from any front end (a replaced file is a version, a replaced folder
/// in the trash), a folder is never replaced by a file unless
/// asked, a kill in the middle leaves the old item or the new one, and reading a bookmark
/// does not crash.
@Suite(.ownsProcesses) struct ReplaceEndToEndTests {
    let directory = TemporaryDirectory("e2e-replace")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }

    func coffer(_ commands: String, home: String? = nil) throws -> CofferBinary.Result {
        var environment: [String: String] = [:]
        if let home { environment = ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"] }
        return try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], environment: environment)
    }

    @Test func theREPLReplacesIntoTheTrashAndRestores() throws {
        _ = try coffer("mkdir X")
        directory.make([user("a.txt"): "new", user("X/a.txt"): "old", user("Album/1.jpg"): "1", user("Album/2.jpg"): "2",
                        user("Shelf/Album"): "a file named Album"])
        #expect(try coffer("cp --replace a.txt X").status == 0)
        #expect(directory.contents(user("X/a.txt")) == "new")
        // A folder is not replaced by a file, and the message says so.
        let refused = try coffer("cp --replace Shelf/Album .")
        #expect(refused.status != 0)
        #expect(refused.errors.contains("“files:/Album” is a folder"), "\(refused.errors)")
        #expect(directory.contents(user("Album/2.jpg")) == "2")
        #expect(try coffer("cp --replace-folder Shelf/Album .").status == 0)
        #expect(directory.contents(user("Album")) == "a file named Album")
        let listed = try coffer("trash")
        #expect(!listed.output.contains("files:/X/a.txt") && listed.output.contains("files:/Album"), "\(listed.output)")
        #expect(try coffer("restore --replace-folder Album").status == 0)
        #expect(directory.contents(user("Album/1.jpg")) == "1")
        // The file replaced is a version of it.
        let versions = try coffer("versions X/a.txt")
        let id = try #require(versions.output.split(separator: "\n").first?.split(separator: " ").first.map(String.init), "\(versions.output)")
        #expect(try coffer("cat --version \(id) X/a.txt").output.trimmingCharacters(in: .newlines) == "old")
        #expect(try coffer("restore --version \(id) X/a.txt").status == 0)
        #expect(directory.contents(user("X/a.txt")) == "old")
    }

    @Test func rpcWriteKeepsAVersionAndNeverReplacesAFolder() throws {
        directory.make([user("notes.txt"): "old notes", user("Album/1.jpg"): "1"])
        let rpc = try RPCProcess(container: container)
        try rpc.initialize()
        #expect(result(try rpc.call("files/write", ["path": "/notes.txt", "data": "new", "conflict": "replace"])) != nil)
        let refused = try rpc.call("files/write", ["path": "/Album", "data": "oops", "conflict": "replace"])
        #expect(errorKind(refused) == "fileExists")
        #expect(directory.contents(user("Album/1.jpg")) == "1")
        #expect((result(try rpc.call("trash/list"))?["items"] as? [[String: Any]])?.isEmpty == true)
        let versions = try #require(result(try rpc.call("files/versions", ["path": "/notes.txt"]))?["versions"] as? [[String: Any]])
        let id = try #require(versions.first?["id"] as? Int)
        #expect(versions.first?["frontEnd"] as? String == "rpc" && versions.first?["size"] as? Int == 9)
        #expect(result(try rpc.call("files/restoreVersion", ["path": "/notes.txt", "id": id])) != nil)
        #expect(directory.contents(user("notes.txt")) == "old notes")
        // A folder replaced by a folder (files/copy), then restored over the copy, byte for byte.
        directory.make([user("New/Album/only.jpg"): "new", user("Album/2.jpg"): "2"])
        #expect(result(try rpc.call("files/copy", ["path": "/New/Album", "toDirectory": "/", "conflict": "replace"])) != nil)
        #expect(directory.names(user("Album")) == ["only.jpg"])
        let listed = try #require(result(try rpc.call("trash/list"))?["items"] as? [[String: Any]])
        let album = try #require(listed.first { $0["originalPath"] as? String == "files:/Album" }?["trashId"] as? String)
        #expect(result(try rpc.call("trash/restore", ["trashId": album, "conflict": "replace"])) != nil)
        #expect(directory.names(user("Album")) == ["1.jpg", "2.jpg"])
        #expect(directory.contents(user("Album/2.jpg")) == "2")
        rpc.closeInput()
        _ = try rpc.waitForExit()
    }

    @Test func mcpWriteFileRefusesAFolderAndKeepsAFileAsAVersion() async throws {
        directory.make([user("Album/1.jpg"): "1", user("Album/2.jpg"): "2", user("Album/3.jpg"): "3", user("Album/4.jpg"): "4",
                        user("a.txt"): "old"])
        let mcp = try await RPCProcess.mcp(container: container)
        let onFolder = try #require(result(try await mcp.awaitCall("tools/call", ["name": "write_file",
                                                                                  "arguments": ["path": "Album", "content": "oops"]])))
        #expect(onFolder["isError"] as? Bool == true)
        #expect(directory.names(user("Album")).count == 4)
        let folderFlag = try #require(result(try await mcp.awaitCall("tools/call", ["name": "write_file", "arguments": [
            "path": "Album", "content": "oops", "conflict": "replaceFolder"]])))
        #expect(folderFlag["isError"] as? Bool == true)
        #expect(directory.names(user("Album")).count == 4)
        let onFile = try #require(result(try await mcp.awaitCall("tools/call", ["name": "write_file",
                                                                                "arguments": ["path": "a.txt", "content": "new"]])))
        #expect(onFile["isError"] as? Bool != true)
        #expect(directory.contents(user("a.txt")) == "new")
        #expect(directory.contents("container/Library/Trash/files/a.txt") == nil)
        let listing = try #require(result(try await mcp.awaitCall("tools/call", ["name": "list_versions", "arguments": ["path": "a.txt"]])))
        let versions = try #require((listing["structuredContent"] as? [String: Any])?["versions"] as? [[String: Any]], "\(listing)")
        let id = try #require(versions.first?["id"] as? Int)
        #expect(versions.first?["by"] as? String == "mcp")
        let audit = directory.contents("container/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        #expect(audit.contains(#""versions":"\#(id)""#), "\(audit)")
        let restored = try #require(result(try await mcp.awaitCall("tools/call", ["name": "restore_version", "arguments": [
            "path": "a.txt", "id": id]])))
        #expect(restored["isError"] as? Bool != true, "\(restored)")
        #expect(directory.contents(user("a.txt")) == "old")
        // A folder moved over a folder: the one replaced is in the trash, whole.
        directory.make([user("Other/Album/new.jpg"): "n"])
        let moved = try #require(result(try await mcp.awaitCall("tools/call", ["name": "move_file", "arguments": [
            "source": "files:/Other/Album", "destination": "files:/Album", "conflict": "replace"]])))
        #expect(moved["isError"] as? Bool != true, "\(moved)")
        #expect(directory.names(user("Album")) == ["new.jpg"])
        #expect(directory.names("container/Library/Trash/files/Album").count == 4)
        mcp.closeInput()
        _ = try mcp.waitForExit()
    }

    @Test func exportReplaceGoesToTheDesktopTrashOfHome() throws {
        let home = directory.url("home")
        directory.make(["home/Desktop/Reports/theirs.txt": "the user's own", user("Reports/ours.txt"): "ours"])
        let exported = try coffer("export --replace Reports ~/Desktop", home: home)
        #expect(exported.status == 0, "\(exported.errors)")
        #expect(directory.names("home/Desktop/Reports") == ["ours.txt"])
        #expect(directory.contents("home/.local/share/Trash/files/Reports/theirs.txt") == "the user's own")
        #expect(directory.contents("home/.local/share/Trash/info/Reports.trashinfo")?.contains("Path=") == true)
    }

    @Test func readingABookmarkedFileDoesNotCrash() throws {
        let home = directory.url("home")
        directory.make(["home/Documents/b.txt": "first line\nsecond line\n"])
        let read = try coffer("open ~/Documents/b.txt; head --bookmark 1; cat --bookmark 1", home: home)
        #expect(read.status == 0, "\(read.errors)")
        #expect(read.output.hasSuffix("first line\nsecond line\nfirst line\nsecond line\n"), "\(read.output)")
    }

    /// `kill -9` while a replacing copy is being written: the old item is still in its
    /// place (the new one is made under a partial name first) or, once placed, the new one
    /// is there and the old one is in the trash. Never neither.
    @Test func killedInTheMiddleLeavesTheOldOrTheNew() throws {
        _ = try coffer("mkdir X")
        let size = 256 << 20
        try Data(repeating: 0x5A, count: size).write(to: URL(fileURLWithPath: directory.url(user("big.bin"))))
        directory.make([user("X/big.bin"): "the old one"])
        // The kill comes as soon as the partial copy exists (or at once, if it never shows).
        let process = try CofferBinary.start(["--container", container, "-c", "cp --replace big.bin X"])
        let folder = directory.url(user("X"))
        for _ in 0..<2000 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            if names.contains(where: { $0.hasPrefix(".coffer-partial-") }) || !process.isRunning { break }
            usleep(1000)
        }
        process.signal(SIGKILL)
        try process.waitForExit()
        let placed = directory.contents(user("X/big.bin"))
        if placed == "the old one" {
            #expect(directory.contents("container/Library/Trash/files/big.bin") == nil)
        } else {
            // Placed: the new one whole, the old one in the trash.
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.url(user("X/big.bin")))
            #expect(attributes[.size] as? Int == size)
            #expect(directory.contents("container/Library/Trash/files/big.bin") == "the old one")
        }
        // What the kill left under a partial name is never listed.
        #expect(try coffer("ls -a X").output.contains(".coffer-partial-") == false)
    }
}
