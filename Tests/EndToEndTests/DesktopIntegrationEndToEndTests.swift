import CofferTestSupport
import Foundation
import Testing

/// The freedesktop.org tools the desktop tests check against (Debian's desktop-file-utils,
/// shared-mime-info, xdg-utils and libglib2.0-bin). Without them the tests are skipped,
/// unless `COFFER_REQUIRE_DESKTOP_TOOLS=1` (set by `.ci/run`, which installs them) makes
/// that a failure.
enum DesktopTools {
    static let names = ["desktop-file-validate", "update-mime-database", "update-desktop-database", "xdg-mime", "gio"]
    static func path(_ tool: String) -> String? {
        ["/usr/bin", "/bin", "/usr/local/bin"].map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
    static let available = names.allSatisfy { path($0) != nil }
    static let required = ProcessInfo.processInfo.environment["COFFER_REQUIRE_DESKTOP_TOOLS"] == "1"
}

/// The repository's example manifest (a notes app with its own types).
let exampleManifest = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Examples/document-types/DocumentTypes.json").path

/// `install-desktop`, `uninstall-desktop` and `open-files`, checked with the real desktop tools
/// in a private `XDG_DATA_HOME`.
@Suite(.serialized, .enabled(if: DesktopTools.available || DesktopTools.required,
                             "desktop-file-utils, shared-mime-info, xdg-utils or gio missing; .ci/run installs them"), .ownsProcesses)
struct DesktopIntegrationEndToEndTests {
    let directory = TemporaryDirectory("e2e-desktop")
    /// A container whose path needs quoting in `Exec=`.
    static let containerName = "my coffer 文件柜"
    var container: String { directory.url(Self.containerName) }
    var data: String { directory.url("data") }

    /// The XDG folders of this test only: no system applications or MIME types interfere.
    var environment: [String: String] {
        ["XDG_DATA_HOME": data, "XDG_STATE_HOME": directory.url("state"), "XDG_CONFIG_HOME": directory.url("config"),
         "XDG_DATA_DIRS": directory.url("system"), "HOME": directory.path, "PATH": "/usr/bin:/bin"]
    }

    func coffer(_ arguments: [String], manifest: String? = exampleManifest) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container] + (manifest.map { ["--document-types", $0] } ?? []) + arguments,
                             environment: environment)
    }

    func tool(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let program = try #require(DesktopTools.path(name), "\(name) is not installed")
        let result = try TestProcess.run([program] + arguments, environment: environment, timeout: 120)
        return (result.status, (result.outputText + result.errorText).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func theInstalledFilesAreWhatTheDesktopToolsAccept() throws {
        let installed = try coffer(["install-desktop", "--user"])
        #expect(installed.status == 0, "\(installed.errors)")
        #expect(installed.errors.isEmpty)  // nothing from update-mime-database either
        let entry = data + "/applications/com.example.Notes.desktop"
        #expect(FileManager.default.fileExists(atPath: entry))
        #expect(FileManager.default.fileExists(atPath: data + "/mime/packages/com.example.Notes.xml"))
        #expect(installed.output.contains("Ran update-mime-database"))
        #expect(installed.output.contains("Ran update-desktop-database"))
        let validation = try tool("desktop-file-validate", [entry])
        #expect(validation.status == 0 && validation.output.isEmpty, "\(validation.output)")
        // The entry runs this very binary, with the container and manifest it was given.
        let text = try #require(directory.contents("data/applications/com.example.Notes.desktop"))
        #expect(text.contains("Exec=\(CofferBinary.url.resolvingSymlinksInPath().path) --container \"\(container)\" --document-types \(exampleManifest) open-files %F"))

        // The custom type, by extension and by content alone.
        directory.make(["by-name.exnotes": "just words", "by-magic.bin": "EXNOTES1 and the rest"])
        for file in ["by-name.exnotes", "by-magic.bin"] {
            #expect(try tool("xdg-mime", ["query", "filetype", directory.url(file)]).output == "application/x-example-notes")
            #expect(try tool("gio", ["info", "-a", "standard::content-type", directory.url(file)]).output
                        .contains("standard::content-type: application/x-example-notes"))
        }
        #expect(try tool("xdg-mime", ["query", "default", "application/x-example-notes"]).output == "com.example.Notes.desktop")
        // PDF is a type it opens at rank Alternate: offered in mimeapps.list, never made the
        // default by installing (xdg-mime names none; GIO offers it as the only application).
        #expect(try tool("xdg-mime", ["query", "default", "application/pdf"]).output.isEmpty)
        #expect(try tool("gio", ["mime", "application/pdf"]).output.contains("\tcom.example.Notes.desktop"))
        #expect(directory.contents("config/mimeapps.list")?.contains("application/pdf=com.example.Notes.desktop;") == true)

        // Opened from a file manager: gio runs the entry's command line with the file, as
        // GNOME Files does, and the file is opened in place.
        let odd = "a $b's 笔记.exnotes"
        directory.make([odd: "EXNOTES1 hi"])
        let launched = try tool("gio", ["launch", entry, directory.url(odd)])
        #expect(launched.status == 0, "\(launched.output)")
        let bookmarks = container + "/Library/Application Support/AppData/bookmarks.json"
        let deadline = Date().addingTimeInterval(20)
        while !((try? String(contentsOfFile: bookmarks, encoding: .utf8))?.contains("笔记.exnotes") ?? false), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let listed = try coffer(["-c", "bookmarks"])
        #expect(listed.output.contains("1  ok  \(directory.url(odd).replacingOccurrences(of: "//", with: "/"))"), "\(listed.output) \(listed.errors)")

        // Installing again replaces what was installed.
        #expect(try coffer(["install-desktop"]).status == 0)
    }

    @Test func uninstallingRemovesExactlyWhatWasInstalled() throws {
        directory.make(["data/applications/someone-else.desktop": "[Desktop Entry]\nType=Application\nName=X\nExec=x\n"])
        #expect(directory.contents("config/mimeapps.list") == nil)
        #expect(try coffer(["install-desktop"]).status == 0)
        #expect(directory.contents("config/mimeapps.list") != nil, "installing offers the app for the types it opens as an alternative")
        let removed = try coffer(["uninstall-desktop"], manifest: nil)
        #expect(removed.status == 0, "\(removed.errors)")
        // The list install-desktop made, empty again, goes too (issue 48).
        #expect(directory.contents("config/mimeapps.list") == nil, "\(directory.contents("config/mimeapps.list") ?? "")")
        #expect(!FileManager.default.fileExists(atPath: data + "/applications/com.example.Notes.desktop"))
        #expect(!FileManager.default.fileExists(atPath: data + "/mime/packages/com.example.Notes.xml"))
        #expect(directory.contents("data/applications/someone-else.desktop") != nil)
        #expect(try tool("xdg-mime", ["query", "default", "application/x-example-notes"]).output.isEmpty)
        let again = try coffer(["uninstall-desktop"])
        #expect(again.status == 1 && again.errors.contains("nothing was installed"))

        // A file changed since it was installed is left alone.
        #expect(try coffer(["install-desktop"]).status == 0)
        let entry = data + "/applications/com.example.Notes.desktop"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: entry))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("Keywords=mine;\n".utf8))
        try handle.close()
        let partial = try coffer(["uninstall-desktop"])
        #expect(partial.status == 1)
        #expect(partial.errors.contains("changed since it was installed"))
        #expect(FileManager.default.fileExists(atPath: entry))
        #expect(!FileManager.default.fileExists(atPath: data + "/mime/packages/com.example.Notes.xml"))
    }

    @Test func aFileOfTheSameNameThatIsNotOursIsNeverReplaced() throws {
        directory.make(["data/applications/com.example.Notes.desktop": "theirs"])
        let refused = try coffer(["install-desktop"])
        #expect(refused.status == 1)
        #expect(refused.errors.contains("was not installed by coffer"))
        #expect(directory.contents("data/applications/com.example.Notes.desktop") == "theirs")
        #expect(!FileManager.default.fileExists(atPath: data + "/mime/packages/com.example.Notes.xml"))
    }

    @Test func anInstallationCutShortLeavesNothingUninstallCannotRemove() throws {
        directory.make(["data/mime": "a file where the MIME folder should be"])
        let failed = try coffer(["install-desktop"])
        #expect(failed.status == 1)
        #expect(failed.errors.contains("cannot install “\(data)/mime/packages/com.example.Notes.xml”"), "\(failed.errors)")
        // The entry went in before the package failed: it is recorded, and removed.
        #expect(FileManager.default.fileExists(atPath: data + "/applications/com.example.Notes.desktop"))
        #expect(directory.names("data/applications").allSatisfy { !$0.hasSuffix(".installing") })
        let removed = try coffer(["uninstall-desktop"])
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(!FileManager.default.fileExists(atPath: data + "/applications/com.example.Notes.desktop"))
        #expect(directory.contents("data/mime") == "a file where the MIME folder should be")
    }

    /// Coffer is a viewer, not a file manager: installed, it is offered for the types it
    /// views, after the application that opens each today, and never takes folders.
    @Test func coffersOwnEntryIsOfferedForWhatItViewsAndNeverForFolders() throws {
        // A PDF viewer and a file manager the system already has.
        directory.make([
            // (GIO lists an application only when its command exists.)
            "system/applications/viewer.desktop": "[Desktop Entry]\nType=Application\nName=Viewer\nExec=/bin/true %F\nMimeType=application/pdf;image/png;\n",
            "system/applications/files.desktop": "[Desktop Entry]\nType=Application\nName=Files\nExec=/bin/true %F\nMimeType=inode/directory;\n",
            "config/mimeapps.list": "[Default Applications]\ntext/html=browser.desktop;\n",
        ])
        #expect(try tool("update-desktop-database", [directory.url("system/applications")]).status == 0)
        let installed = try coffer(["install-desktop"], manifest: nil)
        #expect(installed.status == 0, "\(installed.errors)")
        // Coffer exports no type of its own: an entry, and no MIME package.
        #expect(!FileManager.default.fileExists(atPath: data + "/mime/packages/coffer.xml"))
        #expect(try tool("desktop-file-validate", [data + "/applications/coffer.desktop"]).output.isEmpty)
        // The defaults did not move; Coffer is offered beside them, and for folders not at all.
        #expect(try tool("xdg-mime", ["query", "default", "application/pdf"]).output == "viewer.desktop")
        #expect(try tool("xdg-mime", ["query", "default", "image/png"]).output == "viewer.desktop")
        #expect(try tool("xdg-mime", ["query", "default", "inode/directory"]).output == "files.desktop")
        // xdg-mime reads only defaults and desktop entries: an added association never makes
        // Coffer a default there, even where no one else opens the type.
        #expect(try tool("xdg-mime", ["query", "default", "image/jpeg"]).output.isEmpty)
        let list = try #require(directory.contents("config/mimeapps.list"))
        #expect(list.contains("application/pdf=viewer.desktop;coffer.desktop;"), "\(list)")
        #expect(list.contains("text/html=browser.desktop;"))
        #expect(!list.contains("inode/directory"))
        // GIO offers it second, after the viewer, which stays the default.
        let offered = try tool("gio", ["mime", "application/pdf"]).output
        #expect(offered.hasPrefix("Default application for") && offered.contains("pdf?: viewer.desktop\n")
                || offered.contains("pdf”: viewer.desktop\n"), "\(offered)")
        #expect(offered.contains("Registered applications:\n\tviewer.desktop\n\tcoffer.desktop"), "\(offered)")
        #expect(!(try tool("gio", ["mime", "inode/directory"]).output.contains("coffer.desktop")))
        // Uninstalled, it is taken out of mimeapps.list again, with the defaults it wrote ahead
        // of itself: the file is as it was.
        #expect(try coffer(["uninstall-desktop"], manifest: nil).status == 0)
        let after = try #require(directory.contents("config/mimeapps.list"))
        #expect(after == "[Default Applications]\ntext/html=browser.desktop;\n", "\(after)")
        #expect(try tool("xdg-mime", ["query", "default", "application/pdf"]).output == "viewer.desktop")
    }

    /// Coffer and shared-mime-info, given the same rules, recognise the same files: each probe
    /// is handed to `open-files` (which opens only the probe type) and shown to `gio`.
    @Test func coffersMagicAgreesWithSharedMimeInfo() throws {
        let manifest = #"""
            {"supportsOpeningDocumentsInPlace": true,
             "documentTypes": [{"name": "Probe", "role": "Viewer", "rank": "Owner", "contentTypes": ["com.example.probe"]}],
             "exportedTypes": [{"identifier": "com.example.probe", "description": "Probe", "conformsTo": ["public.data"],
                                "mimeTypes": ["application/x-coffer-probe"], "magic": [
                {"value": "\\x89PRB\\0", "offset": "0:8"},
                {"type": "big16", "offset": 2, "value": "0xCAFE"},
                {"type": "little32", "offset": 0, "value": "0x01020304"},
                {"type": "byte", "offset": 3, "value": "0x7f"},
                {"value": "tab\\there", "offset": 1}]}],
             "application": {"id": "com.example.Probe", "name": "Probe", "exec": "probe", "categories": ["Utility"]}}
            """#
        directory.make(["probe.json": manifest, "probes/": ""])
        let installed = try coffer(["install-desktop"], manifest: directory.url("probe.json"))
        #expect(installed.status == 0, "\(installed.errors)")
        let probes: [(name: String, bytes: [UInt8])] = [
            ("string-at-0", [0x89, 0x50, 0x52, 0x42, 0, 1, 2]),
            ("string-at-8", Array("zzzzzzzz".utf8) + [0x89, 0x50, 0x52, 0x42, 0]),
            ("string-at-9", Array("zzzzzzzzz".utf8) + [0x89, 0x50, 0x52, 0x42, 0]),
            ("string-cut-short", [0x89, 0x50, 0x52, 0x42]),
            ("big16", [0x20, 0x20, 0xCA, 0xFE, 0x20]),
            ("big16-swapped", [0x20, 0x20, 0xFE, 0xCA, 0x20]),
            ("little32", [0x04, 0x03, 0x02, 0x01, 0x20]),
            ("little32-swapped", [0x01, 0x02, 0x03, 0x04, 0x20]),
            ("byte", [0x20, 0x20, 0x20, 0x7F]),
            ("tab", Array("xtab\there".utf8)),
            ("backslash-t", Array(#"xtab\there"#.utf8)),
            ("plain", Array("just some words\n".utf8)),
        ]
        for probe in probes {
            try Data(probe.bytes).write(to: URL(fileURLWithPath: directory.url("probes/" + probe.name)))
        }
        let handed = try coffer(["open-files"] + probes.map { directory.url("probes/" + $0.name) }, manifest: directory.url("probe.json"))
        for probe in probes {
            let gio = try tool("gio", ["info", "-a", "standard::content-type", directory.url("probes/" + probe.name)]).output
            let desktop = gio.contains("standard::content-type: application/x-coffer-probe")
            let coffer = handed.output.contains(directory.url("probes/" + probe.name) + " → opened in place")
            #expect(desktop == coffer, "\(probe.name): gio \(desktop), Coffer \(coffer)")
        }
        #expect(handed.output.components(separatedBy: "opened in place").count - 1 == 6)  // the rules do match something
    }

    // MARK: Files handed in

    @Test func filesHandedInAreOpenedInPlaceOrImportedByTheirRole() throws {
        directory.make(["in/note.exnotes": "EXNOTES1 a note", "in/report.pdf": "%PDF-1.4\n", "in/plain.txt": "text",
                        "in/Trip.notesbundle/page.txt": "p", "in/untitled": "EXNOTES1 saved without a name"])
        let handed = try coffer(["open-files", directory.url("in/note.exnotes"), directory.url("in/report.pdf"),
                                 directory.url("in/Trip.notesbundle"), directory.url("in/plain.txt"), directory.url("in/gone.pdf"),
                                 directory.url("in/untitled")])
        #expect(handed.status == 1)  // the refused and the missing one
        let lines = handed.output.split(separator: "\n").map(String.init)
        // An Editor of an app that opens documents in place, and a Viewer: in place. A package: a copy.
        // A file known only by the manifest's magic is the app's, as it is to the desktop.
        #expect(lines == [
            directory.url("in/note.exnotes") + " → opened in place as bookmark 1",
            directory.url("in/report.pdf") + " → opened in place as bookmark 2",
            directory.url("in/Trip.notesbundle") + " → files:/Import/Trip.notesbundle",
            directory.url("in/untitled") + " → opened in place as bookmark 3",
        ])
        #expect(handed.errors.contains("\(directory.url("in/plain.txt")): This file isn't one of the allowed types (it is public.plain-text)."))
        #expect(handed.errors.contains("\(directory.url("in/gone.pdf")): The item doesn't exist."))
        #expect(directory.contents("\(Self.containerName)/Documents/UserFiles/Import/Trip.notesbundle/page.txt") == "p")
        #expect(directory.contents("in/note.exnotes") == "EXNOTES1 a note")  // in place: never copied, never moved

        // An Editor of an app that does not open documents in place edits a copy; a Viewer still views in place.
        let copying = (try String(contentsOfFile: exampleManifest, encoding: .utf8))
            .replacingOccurrences(of: #""supportsOpeningDocumentsInPlace": true"#, with: #""supportsOpeningDocumentsInPlace": false"#)
        directory.make(["copying.json": copying])
        let copied = try coffer(["--lang", "zh-Hans", "open-files", directory.url("in/note.exnotes"), directory.url("in/report.pdf")],
                                manifest: directory.url("copying.json"))
        #expect(copied.status == 0, "\(copied.errors)")
        #expect(copied.output.split(separator: "\n").map(String.init) == [
            directory.url("in/note.exnotes") + " → files:/Import/note.exnotes",
            directory.url("in/report.pdf") + " → 已原位打开，书签 2",
        ])
        #expect(directory.contents("\(Self.containerName)/Documents/UserFiles/Import/note.exnotes") == "EXNOTES1 a note")
        // The copies are audited; opening in place changes nothing in the sandbox.
        let audit = directory.contents("\(Self.containerName)/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        #expect(audit.contains(#""frontEnd":"open-files","method":"receive","outcome":"ok","paths":["files:/Import/Trip.notesbundle"]"#))
        #expect(audit.contains(#""paths":["files:/Import/note.exnotes"]"#))
        #expect(audit.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 2)
    }
}
