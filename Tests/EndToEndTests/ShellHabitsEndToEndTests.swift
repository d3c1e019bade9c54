import CofferTestSupport
import Foundation
import Testing

/// The habits of sftp users (issue 39): wildcards in every command that takes Coffer paths,
/// `touch`, deleting one trashed item for good, and types by name in `ls -l`.
@Suite(.serialized, .ownsProcesses)
struct ShellHabitsEndToEndTests {
    let directory = TemporaryDirectory("e2e-shell")
    var container: String { directory.url("container") }
    func user(_ relative: String) -> String { "container/Documents/UserFiles/" + relative }

    func coffer(_ commands: String) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands])
    }

    @Test func wildcardsExpandInEveryPathOperandAndSaySoWhenNothingMatches() throws {
        directory.make([user("a.txt"): "a", user("b.txt"): "b", user(".hidden.txt"): "h", user("c.md"): "c",
                        user("*.txt"): "literal star", user("-rf"): "dash", user("Photos/one.png"): "1",
                        user("Photos/two.png"): "2", user("Photos/Nested/three.png"): "3"])
        _ = try coffer("mkdir Import2")
        let listed = try coffer("ls *.txt")
        #expect(listed.status == 0, "\(listed.errors)")
        // In name order; a dot-name only when the pattern starts with a dot; the literal star matches too.
        #expect(listed.output == "*.txt\na.txt\nb.txt\n", "\(listed.output)")
        let copied = try coffer("cp Photos/*.png Import2")
        #expect(copied.status == 0, "\(copied.errors)")
        #expect(directory.names(user("Import2")) == ["one.png", "two.png"])
        // Quoted, a star is a plain character: only the file named “*.txt” goes.
        #expect(try coffer("rm '*.txt'").status == 0)
        #expect(!directory.exists(user("*.txt")) && directory.exists(user("a.txt")))
        // Several levels, and a folder part.
        let deep = try coffer("ls P*/N*/t?ree.png")
        #expect(deep.status == 0 && deep.output == "three.png\n", "\(deep.output) \(deep.errors)")
        // Nothing matches: said, and the command does not run.
        let none = try coffer("rm *.pdf")
        #expect(none.status == 1 && none.errors.contains("nothing matches “*.pdf”"), "\(none.errors)")
        // A name that starts with a dash is never an option.
        let dashed = try coffer("rm ?rf")
        #expect(dashed.status == 0 && !directory.exists(user("-rf")), "\(dashed.errors)")
        #expect(directory.exists(user("a.txt")) && directory.exists(user("b.txt")))
    }

    @Test func touchMakesAnEmptyFileOrSetsTheTimeAndNeverOverwrites() throws {
        directory.make([user("kept.txt"): "contents"])
        let old = Date(timeIntervalSince1970: 1_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: directory.url(user("kept.txt")))
        let result = try coffer("touch new.txt kept.txt")
        #expect(result.status == 0, "\(result.errors)")
        #expect(directory.contents(user("new.txt")) == "")
        #expect(directory.contents(user("kept.txt")) == "contents")
        let modified = try FileManager.default.attributesOfItem(atPath: directory.url(user("kept.txt")))[.modificationDate] as? Date
        #expect((modified ?? old).timeIntervalSinceNow > -60, "the time is now")
    }

    @Test func oneTrashedItemIsDeletedForGoodByNameOrByItsTrashPath() throws {
        directory.make([user("a.txt"): "a", user("b.txt"): "b", user("c.txt"): "c"])
        #expect(try coffer("rm a.txt b.txt c.txt").status == 0)
        let byName = try coffer("empty-trash --yes a.txt")
        #expect(byName.status == 0 && byName.output.contains("Deleted 1 item."), "\(byName.output) \(byName.errors)")
        let unasked = try coffer("rm trash:/b.txt")
        #expect(unasked.status != 0 && unasked.errors.contains("needs --yes"), "\(unasked.errors)")
        let byPath = try coffer("rm -f trash:/b.txt")
        #expect(byPath.status == 0, "\(byPath.errors)")
        #expect(directory.names("container/Library/Trash/files") == ["c.txt"])
        #expect(directory.names("container/Library/Trash/info") == ["c.txt.trashinfo"])
        let missing = try coffer("empty-trash --yes nothing.txt")
        #expect(missing.status == 1 && directory.names("container/Library/Trash/files") == ["c.txt"])
    }

    @Test func lsLongNamesTypesByName() throws {
        directory.make([user("logs.tar.gz"): "x", user("report.pdf"): "%PDF", user("Docs/a.txt"): "a"])
        let result = try coffer("ls -l")
        #expect(result.output.contains("Gzip archive") && result.output.contains("PDF document") && result.output.contains("Folder"),
                "\(result.output)")
        #expect(!result.output.contains("org.gnu.gnu-zip-archive"))
        let chinese = try CofferBinary.run(["--container", container, "--lang", "zh-Hans", "-c", "ls -l"])
        #expect(chinese.output.contains("PDF 文稿"), "\(chinese.output)")
    }

    /// Downloads do not pile up (issue 39): `downloads --clear` forgets the done and failed ones
    /// with their data, and one left unfinished for 30 days is let go at the next `downloads`.
    @Test func downloadsAreClearedAndStaleOnesLetGo() async throws {
        let web = try TransferServer()
        _ = try coffer("download \(web.url("/data/kept?size=1000"))")
        _ = try coffer("download \(web.url("/missing"))")
        let records = container + "/Library/Application Support/AppData/Transfers"
        let cache = container + "/Library/Caches/Downloading"
        // A paused one left for 31 days, with its partial data.
        let stale = #"{"id":"zzstale-1","url":"http://127.0.0.1:1/x","state":"paused","received":3}"#
        try stale.write(toFile: records + "/zzstale-1.json", atomically: true, encoding: .utf8)
        try "abc".write(toFile: cache + "/zzstale-1.download", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-31 * 86_400)],
                                              ofItemAtPath: records + "/zzstale-1.json")
        let listed = try coffer("downloads")
        #expect(listed.output.contains("done") && listed.output.contains("failed") && !listed.output.contains("zzstale"),
                "\(listed.output)")
        #expect(!FileManager.default.fileExists(atPath: cache + "/zzstale-1.download"))
        let cleared = try coffer("downloads --clear")
        #expect(cleared.output.contains("Forgot 2 downloads."), "\(cleared.output) \(cleared.errors)")
        #expect(try coffer("downloads").output.contains("No downloads."))
        #expect(directory.contents(user("Download/kept")) != nil, "what was downloaded stays")
    }
}
