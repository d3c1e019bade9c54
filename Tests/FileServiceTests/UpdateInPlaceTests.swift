import CofferCore
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Testing

/// What `coffer mount` asks of the service: a file opened for writing in place at any offset
/// (`OpenForUpdate`), a truncating open that keeps what the file held as one version, and a
/// delete that sends an item to the trash but an editor's scratch file away for good (`DeleteItem`).
struct UpdateInPlaceTests {
    let fixture: ServiceFixture

    init() async throws { fixture = try await ServiceFixture("update-in-place") }

    @Test func aFileIsWrittenInPlaceAtAnyOffset() async throws {
        try await fixture.save("0123456789", at: "/data.bin")
        let file = try await fixture.session.perform(OpenForUpdate(try fixture.path("/data.bin")))
        defer { file.close() }
        #expect(try Array("abc".utf8).withUnsafeBytes { try file.write(at: 4, $0) } == 3)
        #expect(fixture.directory.contents("c/Documents/UserFiles/data.bin") == "0123abc789")
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(try buffer.withUnsafeMutableBytes { try file.read(at: 3, into: $0) } == 4)
        #expect(buffer == Array("3abc".utf8))
        try file.resize(to: 5)
        #expect(fixture.directory.contents("c/Documents/UserFiles/data.bin") == "0123a")
        try file.synchronize(dataOnly: true)
        // Changing in place keeps no version: only a replace (or emptying) does.
        #expect(try await fixture.service.versions(of: try fixture.path("/data.bin")).isEmpty)
    }

    @Test func aTruncatingOpenKeepsWhatTheFileHeldAsOneVersion() async throws {
        try await fixture.save("the first draft", at: "/report.odt")
        let file = try await fixture.session.perform(OpenForUpdate(try fixture.path("/report.odt"), truncating: true))
        _ = try Array("second".utf8).withUnsafeBytes { try file.write(at: 0, $0) }
        file.close()
        #expect(fixture.directory.contents("c/Documents/UserFiles/report.odt") == "second")
        let versions = try await fixture.service.versions(of: try fixture.path("/report.odt"))
        #expect(versions.count == 1 && versions.first?.size == 15 && versions.first?.frontEnd == "test")
        // An empty file emptied again keeps nothing more.
        let again = try await fixture.session.perform(OpenForUpdate(try fixture.path("/report.odt"), truncating: true))
        again.close()
        let empty = try await fixture.session.perform(OpenForUpdate(try fixture.path("/report.odt"), truncating: true))
        empty.close()
        #expect(try await fixture.service.versions(of: try fixture.path("/report.odt")).count == 2)
        #expect(try await fixture.service.trashItems().items.isEmpty)
    }

    @Test func creatingAndMissingFiles() async throws {
        await #expect(throws: CofferError.self) { try await fixture.session.perform(OpenForUpdate(try fixture.path("/missing.txt"))) }
        let made = try await fixture.session.perform(OpenForUpdate(try fixture.path("/new 新.txt"), creating: true))
        made.close()
        #expect(fixture.directory.contents("c/Documents/UserFiles/new 新.txt") == "")
        do {
            _ = try await fixture.session.perform(OpenForUpdate(try fixture.path("/new 新.txt"), creating: true, exclusive: true))
            Issue.record("an exclusive create over a file succeeded")
        } catch {
            #expect(error.kind == .fileExists)
        }
        _ = try await fixture.session.perform(CreateFolder(try fixture.path("/folder")))
        do {
            _ = try await fixture.session.perform(OpenForUpdate(try fixture.path("/folder")))
            Issue.record("a folder opened for writing")
        } catch {
            #expect(error.kind == .isADirectory)
        }
    }

    @Test func aDeleteTrashesButAScratchFileGoesForGood() async throws {
        let mount = try fixture.service.openSession(SessionOptions(frontEnd: "mount"))
        try await fixture.save("text", at: "/notes.txt")
        try await fixture.save("me,host", at: "/.~lock.notes.txt#")
        try await fixture.save("swap", at: "/.notes.txt.swp")
        guard case .trashed = try await mount.perform(DeleteItem(try fixture.path("/notes.txt"))) else {
            Issue.record("a file was not trashed")
            return
        }
        guard case .discarded = try await mount.perform(DeleteItem(try fixture.path("/.~lock.notes.txt#"))) else {
            Issue.record("a lock file was not deleted")
            return
        }
        // Another front end's row names no scratch files: everything goes to the trash.
        guard case .trashed = try await fixture.session.perform(DeleteItem(try fixture.path("/.notes.txt.swp"))) else {
            Issue.record("the test front end discarded a file")
            return
        }
        let names = try await fixture.service.trashItems().items.map(\.originalPath.name).sorted()
        #expect(names == [".notes.txt.swp", "notes.txt"])
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.url("c/Documents/UserFiles/.~lock.notes.txt#")))
        await mount.close()
    }

    @Test func anEditorsBackupOfASavedFileBecomesItsVersion() async throws {
        let mount = try fixture.service.openSession(SessionOptions(frontEnd: "mount"))
        // Vim's save: the file renamed aside, the new one written, the backup deleted.
        try await fixture.save("old words", at: "/notes.txt")
        _ = try await mount.perform(MoveItem(try fixture.path("/notes.txt"), to: .exactly(try fixture.path("/notes.txt~"))))
        try await fixture.save("new words", at: "/notes.txt")
        guard case .keptAsVersion(let file) = try await mount.perform(DeleteItem(try fixture.path("/notes.txt~"))) else {
            Issue.record("the backup was not kept as a version")
            return
        }
        #expect(file == (try fixture.path("/notes.txt")))
        let versions = try await fixture.service.versions(of: try fixture.path("/notes.txt"))
        #expect(versions.count == 1 && versions.first?.size == 9 && versions.first?.frontEnd == "mount")
        let kept = try await fixture.service.openVersion(try #require(versions.first?.id), of: try fixture.path("/notes.txt"))
        #expect(String(decoding: try await kept.read(upTo: 100), as: UTF8.self) == "old words")
        await kept.close()
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.url("c/Documents/UserFiles/notes.txt~")))
        #expect(try await fixture.service.trashItems().items.isEmpty)
        // A backup with no file beside it is a scratch file like any other.
        try await fixture.save("alone", at: "/lonely.txt~")
        guard case .discarded = try await mount.perform(DeleteItem(try fixture.path("/lonely.txt~"))) else {
            Issue.record("a lone backup was not deleted")
            return
        }
        // SQLite's log beside its database is scratch; a document named like one is not.
        try await fixture.save("SQLite format 3\u{0}and pages", at: "/notes.db")
        try await fixture.save("log", at: "/notes.db-wal")
        try await fixture.save("words", at: "/travel-journal")
        try await fixture.save("a plan", at: "/trip")
        try await fixture.save("notes of the trip", at: "/trip-journal")
        guard case .discarded = try await mount.perform(DeleteItem(try fixture.path("/notes.db-wal"))),
              case .trashed = try await mount.perform(DeleteItem(try fixture.path("/travel-journal"))),
              case .trashed = try await mount.perform(DeleteItem(try fixture.path("/trip-journal"))) else {
            Issue.record("a database's log went to the trash, or a document named like one did not")
            return
        }
        await mount.close()
    }

    @Test func scratchNames() throws {
        let names = try ScratchNames()
        for name in [".~lock.report.odt#", ".notes.txt.swp", "4913", "notes.txt~", ".goutputstream-AB12CD", "film.mp4.part",
                     "#notes.org#", ".#notes.org", ".notes.kate-swp"] {
            #expect(names.contains(name), "\(name)")
        }
        for name in ["report.odt", "notes.txt", "swap.txt", "part.txt", "lock"] {
            #expect(!names.contains(name), "\(name)")
        }
        #expect(try ScratchNames(["*.tmp"]).contains("x.tmp"))
        #expect(ScratchNames.database(ofCompanion: "notes.db-wal") == "notes.db")
        #expect(ScratchNames.database(ofCompanion: "notes.sqlite-journal") == "notes.sqlite")
        #expect(ScratchNames.database(ofCompanion: "-shm") == nil && ScratchNames.database(ofCompanion: "notes.db") == nil)
    }
}
