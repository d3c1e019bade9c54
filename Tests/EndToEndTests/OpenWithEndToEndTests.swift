import CofferTestSupport
import Foundation
import Testing

/// "Open with" (issue 36) against a scratch desktop: `XDG_DATA_HOME` with two `.desktop`
/// entries whose `Exec` is a script that records its arguments, a `mimeapps.list` naming the
/// default, and nothing of the machine's own applications. The applications listed are those
/// `gio mime` (GLib) lists; the one chosen receives a read-only copy, the file itself with
/// `--in-place`, and a host file where it is (also by its bookmark, after it moved).
@Suite(.serialized, .ownsProcesses)
struct OpenWithEndToEndTests {
    let directory = TemporaryDirectory("e2e-open-with")
    var container: String { directory.url("container") }
    var calls: String { directory.url("calls") }
    var environment: [String: String] {
        ["XDG_DATA_HOME": directory.url("data"), "XDG_DATA_DIRS": directory.url("system"),
         "XDG_CONFIG_HOME": directory.url("config"), "XDG_CONFIG_DIRS": directory.url("none")]
    }

    init() throws {
        let recorder = directory.url("record.sh")
        directory.make([
            "record.sh": "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '\(directory.url("calls"))'\n",
            "data/applications/recorder.desktop": "[Desktop Entry]\nType=Application\nName=Recorder\nExec=\(recorder) %f\nMimeType=text/plain;application/pdf;\n",
            "data/applications/viewer.desktop": "[Desktop Entry]\nType=Application\nName=Viewer\nExec=\(recorder) --view %U\nMimeType=text/plain;\n",
            "data/applications/broken.desktop": "[Desktop Entry]\nType=Application\nName=Broken\nExec=/nonexistent/program %f\nMimeType=text/plain;\n",
            // A program that fails as it starts, as a terminal without a display does.
            "data/applications/failing.desktop": "[Desktop Entry]\nType=Application\nName=Failing\nExec=/bin/false %f\nMimeType=text/plain;\n",
            "config/mimeapps.list": "[Default Applications]\ntext/plain=viewer.desktop\n",
            "host/notes.txt": "on the host\n",
            "none/.keep": "",
        ])
        #expect(chmod(recorder, 0o755) == 0)
        // shared-mime-info's database, for GLib (and Coffer) to know which types are kinds of which.
        try FileManager.default.createDirectory(atPath: directory.url("system"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.url("system/mime"), withDestinationPath: "/usr/share/mime")
        #expect(TestProcess.launchedAndWaited(["update-desktop-database", directory.url("data/applications")]) == 0)
        #expect(try coffer("mkdir Docs").status == 0)
        directory.make(["container/Documents/UserFiles/Docs/todo.txt": "to do\n"])
    }

    func coffer(_ commands: String) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], environment: environment)
    }

    /// The ids `gio mime TYPE` lists, default first.
    func gio(_ type: String) throws -> [String] {
        let text = try TestProcess.run(["gio", "mime", type],
                                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                       timeout: 60).outputText
        var ids: [String] = []
        if let line = text.split(separator: "\n").first, let colon = line.lastIndex(of: ":") {
            ids.append(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var inRegistered = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("Registered applications") { inRegistered = true; continue }
            if !line.hasPrefix("\t") { inRegistered = false; continue }
            let id = line.trimmingCharacters(in: .whitespaces)
            if inRegistered && !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// The arguments the script recorded, waiting for it to have run.
    func recorded(count: Int) async throws -> [String] {
        for _ in 0..<100 {
            let lines = ((try? String(contentsOfFile: calls, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count >= count { return lines }
            try await Task.sleep(for: .milliseconds(50))
        }
        return []
    }

    @Test func theApplicationsAreGLibsAndTheChosenOneGetsTheFile() async throws {
        let listed = try coffer("open-with Docs/todo.txt")
        #expect(listed.status == 0, "\(listed.errors)")
        let ids = listed.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true)[2] }.map(String.init)
        #expect(ids.first == "viewer.desktop" && Set(ids) == ["viewer.desktop", "recorder.desktop", "failing.desktop"],
                "\(listed.output)")
        #expect(ids == (try gio("text/plain")), "the same as gio mime, default first")
        #expect(listed.output.contains("(default)") && !listed.output.contains("Broken"), "an entry whose program is missing is left out")

        // A read-only copy by default, by name or by id.
        #expect(try coffer("open-with Docs/todo.txt Recorder").status == 0)
        let copy = try #require(try await recorded(count: 1).first)
        #expect(copy.hasPrefix(container + "/Documents/ExportTemp/open-") && copy.hasSuffix("/todo.txt"))
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == "to do\n")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? Int)
        #expect(mode == 0o400, "the copy is read-only")

        // The file itself with --in-place (as a file:// URI for %U), a host file where it is.
        #expect(try coffer("open-with --in-place Docs/todo.txt viewer").status == 0)
        let inPlace = try await recorded(count: 3)
        #expect(Array(inPlace.suffix(2)) == ["--view", "file://" + container + "/Documents/UserFiles/Docs/todo.txt"])
        let host = try coffer("open-with host:\(directory.url("host/notes.txt")) recorder.desktop")
        #expect(host.status == 0, "\(host.errors)")
        let hostPath = URL(fileURLWithPath: directory.url("host/notes.txt")).resolvingSymlinksInPath().path
        #expect(try await recorded(count: 4).last == hostPath)

        // A host file opened in place before, by its bookmark, even after it moved.
        #expect(try coffer("open \(directory.url("host/notes.txt"))").status == 0)
        try FileManager.default.moveItem(atPath: directory.url("host/notes.txt"), toPath: directory.url("host/renamed.txt"))
        let byBookmark = try coffer("open-with --bookmark 1 Recorder")
        #expect(byBookmark.status == 0, "\(byBookmark.errors)")
        #expect(try await recorded(count: 5).last == URL(fileURLWithPath: directory.url("host/renamed.txt")).resolvingSymlinksInPath().path)

        let unknown = try coffer("open-with Docs/todo.txt Nothing")
        #expect(unknown.status == 1 && unknown.errors.contains("no application “Nothing”"), "\(unknown.errors)")

        // RPC lists the same, and opens the same way.
        let rpc = try RPCProcess(container: container, environment: environment)
        defer { rpc.closeInput() }
        _ = try await rpc.awaitCall("initialize", ["locale": "en"])
        let answer = try #require(result(try await rpc.awaitCall("files/applications", ["path": "files:/Docs/todo.txt"])))
        #expect(answer["mimeType"] as? String == "text/plain")
        #expect((answer["applications"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ids)
        let opened = try #require(result(try await rpc.awaitCall("files/openWith", ["path": "files:/Docs/todo.txt",
                                                                                  "application": "Recorder"])))
        #expect((opened["hostPath"] as? String)?.hasSuffix("/todo.txt") == true && opened["inPlace"] as? Bool == false)
    }

    /// An application that fails as it starts is reported, never said to have opened the file
    /// (issue 48: a terminal without a display).
    @Test func anApplicationThatFailsAsItStartsIsReported() async throws {
        let failed = try coffer("open-with Docs/todo.txt failing.desktop")
        #expect(failed.status == 1 && failed.errors.contains("failed as it started"), "\(failed.output) \(failed.errors)")
        #expect(!failed.output.contains("Opened"), "\(failed.output)")
    }
}
