import CofferTestSupport
import Foundation
import Testing

/// The host bridge through the built binary: real host folders, what is printed, and what
/// ends up on disk on both sides.
@Suite(.serialized, .ownsProcesses)
struct HostBridgeEndToEndTests {
    let directory = TemporaryDirectory("e2e-host")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }
    func host(_ relative: String) -> String { directory.url("host/" + relative) }

    func coffer(_ commands: String, language: String = "en") throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", language, "-c", commands])
    }

    init() throws {
        directory.make(["host/Album/cat.txt": "meow\n", "host/Album/Sub/deep.txt": "deep\n", "host/notes.txt": "line 1\nline 2\nline 3\n"])
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52,
                  0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0, 0x3A, 0x7E, 0x9B, 0x55])
            .write(to: URL(fileURLWithPath: host("pixel.png")))
    }

    @Test func importPrintsALinePerItemAndFailsIfAnyItemFailed() throws {
        let result = try coffer("import '\(host("notes.txt"))' '\(host("Album"))' '\(host("missing.txt"))'")
        #expect(result.status == 1)
        #expect(result.output == "\(host("notes.txt")) → files:/Import/notes.txt\n\(host("Album")) → files:/Import/Album\n")
        #expect(result.errors.hasPrefix("coffer: \(host("missing.txt")): The item doesn't exist."))
        #expect(directory.contents(user("Import/Album/Sub/deep.txt")) == "deep\n")
        // Again: keep both is the default.
        let again = try coffer("import '\(host("notes.txt"))'")
        #expect(again.status == 0)
        #expect(again.output == "\(host("notes.txt")) → files:/Import/notes (2).txt (“notes.txt” was already there and was kept)\n")
    }

    @Test func importWithTypesChecksTheContent() throws {
        directory.make(["host/fake.png": "not an image\n"])
        let result = try coffer("import --into / --types public.image '\(host("pixel.png"))' '\(host("fake.png"))'")
        #expect(result.status == 1)
        #expect(result.output == "\(host("pixel.png")) → files:/pixel.png\n")
        #expect(result.errors.contains("\(host("fake.png")): This file isn't one of the allowed types (it is public.plain-text)."))
        #expect(directory.names(user("")).contains("pixel.png"))
        #expect(!directory.exists(user("fake.png")))
        let unknown = try coffer("import --types public.nonsense '\(host("pixel.png"))'")
        #expect(unknown.status == 1)
        #expect(unknown.errors.contains("unknown type public.nonsense"))
    }

    @Test func exportCopiesOutAndKeepsBoth() throws {
        _ = try coffer("import '\(host("notes.txt"))'")
        directory.make(["host/Out/notes.txt": "theirs"])
        let result = try coffer("export Import/notes.txt '\(host("Out"))'; export Import/notes.txt '\(host("Out"))'")
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.split(separator: "\n").map { ($0 as Substring).hasSuffix("/Out/notes (2).txt") || $0.hasSuffix("/Out/notes (3).txt") } == [true, true])
        #expect(directory.contents("host/Out/notes.txt") == "theirs")
        #expect(directory.contents("host/Out/notes (2).txt") == "line 1\nline 2\nline 3\n")
        #expect(directory.contents(user("Import/notes.txt")) == "line 1\nline 2\nline 3\n")
        #expect(directory.names("container/Documents/ExportTemp").isEmpty)
        let missing = try coffer("export Import/notes.txt '\(host("NoSuchFolder"))'")
        #expect(missing.status == 1)
        #expect(missing.errors.hasPrefix("coffer: \(host("NoSuchFolder")): The item doesn't exist."))
    }

    @Test func bookmarksOutliveTheProcessAndNoticeChanges() throws {
        let opened = try coffer("open '\(host("notes.txt"))'")
        #expect(opened.status == 0, "\(opened.errors)")
        #expect(opened.output.hasPrefix("Opened “notes.txt” in place as bookmark 1: Plain text (public.plain-text), 21 B."))
        // A later process reads it through the bookmark, after a rename in its folder.
        try FileManager.default.moveItem(atPath: host("notes.txt"), toPath: host("renamed.txt"))
        let read = try coffer("head -n 2 --bookmark 1; bookmarks")
        #expect(read.status == 0, "\(read.errors)")
        let canonical = realpath(directory.path, nil).map { String(cString: $0) } ?? directory.path
        #expect(read.output == "line 1\nline 2\n1  ok  \(canonical)/host/renamed.txt\n")
        try FileManager.default.removeItem(atPath: host("renamed.txt"))
        let stale = try coffer("bookmarks; cat --bookmark 1")
        #expect(stale.status == 1)
        #expect(stale.output == "1  stale  \(canonical)/host/renamed.txt\n")
        #expect(stale.errors == "coffer: The bookmarked file “renamed.txt” was deleted or replaced. Open the file again to make a new bookmark.\n")
        #expect(try coffer("bookmarks --remove 1; bookmarks").output == "No bookmarks yet; “open” makes one.\n")
    }

    @Test func catAndHeadDetectTheEncoding() throws {
        _ = try coffer("ls")
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "第一行\n第二行\n".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        try Data(utf16).write(to: URL(fileURLWithPath: directory.url(user("u16.txt"))))
        // 年度报告 in GB 18030.
        try Data([0xC4, 0xEA, 0xB6, 0xC8, 0xB1, 0xA8, 0xB8, 0xE6, 0x0A]).write(to: URL(fileURLWithPath: directory.url(user("gb.txt"))))
        let result = try coffer("cat u16.txt; head -n 1 u16.txt; cat gb.txt")
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "第一行\n第二行\n第一行\n年度报告\n")
        #expect(result.errors == "(read as UTF-16LE)\n(read as UTF-16LE)\n(read as GB18030)\n")
        let info = try coffer("info gb.txt")
        #expect(info.output.contains("Encoding:    GB18030\n"))
        // Binary is refused, not dumped on the terminal.
        _ = try coffer("import --into / '\(host("pixel.png"))'")
        let binary = try coffer("cat pixel.png")
        #expect(binary.status == 1)
        #expect(binary.output.isEmpty)
        #expect(binary.errors.hasPrefix("coffer: “files:/pixel.png” isn't text in UTF-8, UTF-16 or GB 18030."))
    }

    @Test func infoFlagsANameThatLies() throws {
        _ = try coffer("ls")
        directory.make([user("photo.png"): "I am text\n"])
        let result = try coffer("info photo.png", language: "zh-Hans")
        #expect(result.status == 0)
        #expect(result.output.contains("类型:      PNG 图像 (public.png)\n"))
        #expect(result.output.contains("按内容:    纯文本 (public.plain-text)，与名称不符\n"))
    }

    @Test func aFullDiskFailsOneItemAndLeavesNoPartialFile() throws {
        let random = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        try Data(random).write(to: URL(fileURLWithPath: host("big.bin")))
        // A file-size limit makes every write past 512 KiB fail with EFBIG, as a full disk would
        // with ENOSPC; SIGXFSZ is ignored so the write fails instead of killing the process.
        let limited = ["/bin/sh", "-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\""]
        let result = try CofferBinary.run(
            ["--container", container, "-c", "import '\(host("big.bin"))' '\(host("notes.txt"))'"], launcher: limited)
        #expect(result.status == 1)
        #expect(result.output == "\(host("notes.txt")) → files:/Import/notes.txt\n")
        #expect(result.errors.hasPrefix(
            "coffer: \(host("big.bin")): There isn't enough space to write “files:/Import/big.bin”."))
        // Nothing partial, under any name, hidden ones included.
        #expect(directory.names(user("Import")) == ["notes.txt"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: host("big.bin"))).count == 3 << 20)
    }

    @Test func unreadableItemsFailAloneAndUnreadableEntriesAreLeftOut() throws {
        directory.make(["host/secret.txt": "s", "host/Box/locked.txt": "l", "host/Box/open.txt": "o"])
        chmod(host("secret.txt"), 0)
        chmod(host("Box/locked.txt"), 0)
        // Root reads everything: run as nobody then, in folders nobody may use.
        var launcher: [String] = []
        if getuid() == 0 {
            launcher = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            for folder in [directory.path, host(""), host("Box"), host("Album"), host("Album/Sub")] { chmod(folder, 0o777) }
        }
        let result = try CofferBinary.run(
            ["--container", container, "-c",
             "import '\(host("secret.txt"))' '\(host("notes.txt"))' '\(host("Box"))'"], launcher: launcher)
        #expect(result.status == 1)
        #expect(result.output == "\(host("notes.txt")) → files:/Import/notes.txt\n\(host("Box")) → files:/Import/Box\n")
        #expect(result.errors.contains("coffer: \(host("secret.txt")): You don't have permission to do that."))
        #expect(result.errors.contains("/Box/locked.txt: You don't have permission to do that."))
        #expect(directory.names(user("Import/Box")) == ["open.txt"])
    }
}
