import CofferDesktop
import CofferTestSupport
import Foundation
import Testing

/// The desktop's recent files (issue 35): what Coffer records in `recently-used.xbel` is read
/// back by GLib's own `GBookmarkFile`, other programs' entries are kept, two processes adding
/// at once lose nothing, and `--no-recents` records nothing.
@Suite(.serialized, .ownsProcesses)
struct RecentFilesEndToEndTests {
    let directory = TemporaryDirectory("e2e-recents")
    var container: String { directory.url("container") }
    var home: String { URL(fileURLWithPath: directory.url("home")).standardizedFileURL.path }
    var xbel: String { home + "/.local/share/recently-used.xbel" }

    static let foreign = """
        <?xml version="1.0" encoding="UTF-8"?>
        <xbel version="1.0"
              xmlns:bookmark="http://www.freedesktop.org/standards/desktop-bookmarks"
              xmlns:mime="http://www.freedesktop.org/standards/shared-mime-info"
        >
          <bookmark href="file:///srv/report.odt" added="2026-11-01T10:00:00.000000Z" modified="2026-11-01T10:00:00.000000Z" visited="2026-11-01T10:00:00.000000Z">
            <info>
              <metadata owner="http://freedesktop.org">
                <mime:mime-type type="application/vnd.oasis.opendocument.text"/>
                <bookmark:applications>
                  <bookmark:application name="libreoffice" exec="&apos;soffice %u&apos;" modified="2026-11-01T10:00:00.000000Z" count="3"/>
                </bookmark:applications>
              </metadata>
            </info>
          </bookmark>
        </xbel>

        """

    init() throws {
        directory.make(["home/.local/share/recently-used.xbel": Self.foreign, "home/Downloads/plan.txt": "plan\n",
                        "home/Downloads/notes 笔记.md": "# notes\n"])
        #expect(try coffer("pwd").status == 0)
    }

    func coffer(_ commands: String, _ extra: [String] = []) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en"] + extra + ["-c", commands],
                             environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
    }

    /// Each URI GLib reads, with its MIME type and applications (Scripts/glib_bookmarks.py).
    func readByGLib() throws -> [String] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/glib_bookmarks.py")
        let result = try TestProcess.run(["/usr/bin/python3", script.path, xbel], timeout: 60)
        #expect(result.status == 0, "GLib could not load \(xbel): \(result.errorText)")
        return result.outputText.split(separator: "\n").map(String.init)
    }

    @Test func glibReadsWhatCofferRecordsAndOthersEntriesStay() throws {
        let used = try coffer("import '\(home)/Downloads/plan.txt' '\(home)/Downloads/notes 笔记.md'; open '\(home)/Downloads/plan.txt'")
        #expect(used.status == 0, "\(used.errors)")
        let entries = try readByGLib()
        let userFiles = URL(fileURLWithPath: container).standardizedFileURL.path + "/Documents/UserFiles"
        #expect(entries.contains("file:///srv/report.odt b'application/vnd.oasis.opendocument.text' ['libreoffice']"), "\(entries)")
        #expect(entries.contains("file://\(userFiles)/Import/plan.txt b'text/plain' ['coffer']"), "\(entries)")
        #expect(entries.contains("file://\(userFiles)/Import/notes%20%E7%AC%94%E8%AE%B0.md b'text/markdown' ['coffer']"), "\(entries)")
        #expect(entries.contains("file://\(home)/Downloads/plan.txt b'text/plain' ['coffer']"), "\(entries)")
        var info = stat()
        #expect(stat(xbel, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let recent = try coffer("recent")
        let places = recent.output.split(separator: "\n").map { String($0.split(separator: " ", maxSplits: 2).last ?? "")
            .trimmingCharacters(in: .whitespaces) }
        #expect(Set(places) == ["host:\(home)/Downloads/plan.txt", "files:/Import/plan.txt", "files:/Import/notes 笔记.md"],
                "\(recent.output)")
        #expect(places.first == "host:\(home)/Downloads/plan.txt", "newest first: \(places)")

        // A program sees the host files its host access reaches, and the container's by path only.
        let rpc = try RPCProcess(container: container, arguments: ["--allow-host", home + "/Downloads"],
                                 environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        defer { rpc.closeInput() }
        try rpc.initialize()
        let files = try #require(result(try rpc.call("files/recent"))?["files"] as? [[String: Any]])
        #expect(files.compactMap { $0["path"] as? String }.sorted() == ["files:/Import/notes 笔记.md", "files:/Import/plan.txt"])
        #expect(files.first?["hostPath"] as? String == "\(home)/Downloads/plan.txt" && files.first?["path"] == nil)
        #expect(files.filter { $0["path"] != nil }.allSatisfy { $0["hostPath"] == nil }, "\(files)")
        let closed = try RPCProcess(container: container, environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        defer { closed.closeInput() }
        try closed.initialize()
        let reachable = try #require(result(try closed.call("files/recent"))?["files"] as? [[String: Any]])
        #expect(reachable.count == 2 && reachable.allSatisfy { $0["hostPath"] == nil }, "\(reachable)")

        let before = try String(contentsOfFile: xbel, encoding: .utf8)
        #expect(try coffer("import --keep-both '\(home)/Downloads/plan.txt'", ["--no-recents"]).status == 0)
        #expect(try String(contentsOfFile: xbel, encoding: .utf8) == before, "--no-recents records nothing")
    }

    /// The desktop's list is shared by every container: one never shows another's files, nor
    /// where either is.
    @Test func anotherContainersFilesAreNeverListed() throws {
        let other = URL(fileURLWithPath: directory.url("other")).standardizedFileURL.path
        let otherUsed = try CofferBinary.run(["--container", other, "--lang", "en", "-c", "import '\(home)/Downloads/plan.txt'"],
                                             environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        #expect(otherUsed.status == 0, "\(otherUsed.errors)")
        #expect(try coffer("import '\(home)/Downloads/notes 笔记.md'").status == 0)
        let recent = try coffer("recent")
        #expect(recent.status == 0)
        #expect(!recent.output.contains(other) && !recent.output.contains("UserFiles"), "\(recent.output)")
        #expect(recent.output.split(separator: "\n").count == 1 && recent.output.contains("files:/Import/notes 笔记.md"),
                "\(recent.output)")
        #expect(try String(contentsOfFile: xbel, encoding: .utf8).contains(other), "the other container's use is recorded")
        let rpc = try RPCProcess(container: container, arguments: ["--allow-host", home],
                                 environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        defer { rpc.closeInput() }
        try rpc.initialize()
        let listed = String(decoding: try JSONSerialization.data(withJSONObject: try #require(result(try rpc.call("files/recent")))),
                            as: UTF8.self)
        #expect(!listed.contains(other) && !listed.contains("UserFiles") && !listed.contains(container), "\(listed)")
    }

    @Test func twoProcessesRecordingAtOnceLoseNothing() async throws {
        for index in 0..<12 { directory.make(["home/Many/file \(index).txt": "\(index)"]) }
        async let first = CofferBinary.running(["--container", container, "-c",
                                                (0..<6).map { "import '\(home)/Many/file \($0).txt'" }.joined(separator: "; ")],
                                               environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        async let second = CofferBinary.running(["--container", container, "-c",
                                                 (6..<12).map { "import '\(home)/Many/file \($0).txt'" }.joined(separator: "; ")],
                                                environment: ["HOME": home, "XDG_DATA_HOME": home + "/.local/share"])
        let (a, b) = try await (first, second)
        #expect(a.status == 0 && b.status == 0)
        let entries = try readByGLib()
        #expect(entries.filter { $0.contains("/Import/file%20") }.count == 12, "\(entries)")
        #expect(entries.contains { $0.hasPrefix("file:///srv/report.odt") })
    }
}
