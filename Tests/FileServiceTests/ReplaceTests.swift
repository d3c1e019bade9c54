@testable import CofferBackends
import CofferCore
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Synchronization
import Testing

/// A replace never deletes: for every operation that can replace, an old file is kept as a
/// version and comes back whole with a version's restore, an old folder goes to the trash and
/// comes back whole with `restore`; a folder and a file replace each other only with
/// `.replaceFolder`; the audit entry names what was trashed and what was kept.
struct ReplaceTests {
    /// A container, a session allowed anywhere on the host, and a scratch home's desktop trash.
    let fixture: HostFixture
    var directory: TemporaryDirectory { fixture.directory }
    var session: Session { fixture.session }

    init() async throws { fixture = try await HostFixture("replace") }

    /// The old item is in the trash under its place, and `restore` (making way for it with
    /// a replace of its own) brings it back byte for byte.
    func expectRestorable(_ place: String, files: [String: String]) async throws {
        let listing = try await fixture.service.trashItems()
        let item = try #require(listing.items.last { $0.originalPath == (try fixture.path(place)) })
        _ = try await session.perform(RestoreItem(.id(item.id), conflict: .replaceFolder))
        for (relative, contents) in files { #expect(directory.contents(fixture.user(relative)) == contents) }
    }

    /// The old file is the newest version of the file at `place`, and restoring it brings it
    /// back byte for byte; nothing went to the trash.
    func expectRestorableVersion(_ place: String, _ relative: String, _ contents: String) async throws {
        let versions = try await fixture.service.versions(of: try fixture.path(place))
        let newest = try #require(versions.first, "no version of \(place)")
        _ = try await session.perform(RestoreVersion(newest.id, of: try fixture.path(place)))
        #expect(directory.contents(fixture.user(relative)) == contents)
        #expect(try await fixture.service.trashItems().items.isEmpty)
    }

    func versionsInAudit() -> [String] {
        let log = directory.contents("c/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        return log.split(separator: "\n").compactMap { line in
            let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return entry?["versions"] as? String
        }
    }

    func trashedInAudit() -> [String] {
        let log = directory.contents("c/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        return log.split(separator: "\n").compactMap { line in
            let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (entry?["trashed"] as? [String])?.joined(separator: ",")
        }
    }

    @Test func copyReplacingAFileKeepsTheOldOneAsAVersion() async throws {
        directory.make([fixture.user("a.txt"): "new", fixture.user("X/a.txt"): "old"])
        let node = try await session.perform(CopyItem(try fixture.path("/a.txt"), to: .into(try fixture.path("/X")), conflict: .replace))
        #expect(node.path == (try fixture.path("/X/a.txt")))
        #expect(directory.contents(fixture.user("X/a.txt")) == "new")
        #expect(trashedInAudit().isEmpty && versionsInAudit().count == 1)
        try await expectRestorableVersion("/X/a.txt", "X/a.txt", "old")
        // What the restore replaced (the copy) is a version in turn.
        #expect(try await fixture.service.versions(of: try fixture.path("/X/a.txt")).count == 2)
    }

    @Test func aFolderIsReplacedOnlyByAFolderUnlessAsked() async throws {
        directory.make([fixture.user("a.txt"): "new", fixture.user("X/a.txt/1.jpg"): "one", fixture.user("X/a.txt/2.jpg"): "two"])
        let refused = await thrownError(of: try await session.perform(
            CopyItem(try fixture.path("/a.txt"), to: .into(try fixture.path("/X")), conflict: .replace)))
        #expect(refused?.kind == .fileExists)
        #expect(refused?.detail == "folder-in-the-way")
        #expect(refused?.userMessage(in: .english).text.contains("is a folder") == true)
        #expect(directory.contents(fixture.user("X/a.txt/1.jpg")) == "one")
        #expect(try await fixture.service.trashItems().items.isEmpty)
        // A file is not replaced by a folder either.
        directory.make([fixture.user("Y/a.txt"): "old file"])
        let folderOverFile = await thrownError(of: try await session.perform(
            CopyItem(try fixture.path("/X/a.txt"), to: .into(try fixture.path("/Y")), conflict: .replace)))
        #expect(folderOverFile?.detail == "file-in-the-way")
        #expect(directory.contents(fixture.user("Y/a.txt")) == "old file")
        // Asked explicitly, the folder goes to the trash whole.
        _ = try await session.perform(CopyItem(try fixture.path("/a.txt"), to: .into(try fixture.path("/X")), conflict: .replaceFolder))
        #expect(directory.contents(fixture.user("X/a.txt")) == "new")
        try await expectRestorable("/X/a.txt", files: ["X/a.txt/1.jpg": "one", "X/a.txt/2.jpg": "two"])
    }

    @Test func writeReplacingKeepsAVersionAndRefusesAFolder() async throws {
        directory.make([fixture.user("notes.txt"): "old notes", fixture.user("Album/1.jpg"): "1"])
        _ = try await session.perform(WriteFile(try fixture.path("/notes.txt"), bytes: Array("new notes".utf8), conflict: .replace))
        #expect(directory.contents(fixture.user("notes.txt")) == "new notes")
        let refused = await thrownError(of: try await session.perform(
            WriteFile(try fixture.path("/Album"), bytes: Array("oops".utf8), conflict: .replace)))
        #expect(refused?.detail == "folder-in-the-way")
        #expect(directory.contents(fixture.user("Album/1.jpg")) == "1")
        try await expectRestorableVersion("/notes.txt", "notes.txt", "old notes")
    }

    @Test func moveAndRenameReplacingKeepTheOldOneAsAVersion() async throws {
        directory.make([fixture.user("a.txt"): "moved", fixture.user("Docs/a.txt"): "old", fixture.user("b.txt"): "renamed", fixture.user("c.txt"): "old c"])
        _ = try await session.perform(MoveItem(try fixture.path("/a.txt"), to: .into(try fixture.path("/Docs")), conflict: .replace))
        #expect(directory.contents(fixture.user("Docs/a.txt")) == "moved")
        #expect(!directory.exists(fixture.user("a.txt")))
        _ = try await session.perform(RenameItem(try fixture.path("/b.txt"), to: "c.txt", conflict: .replace))
        #expect(directory.contents(fixture.user("c.txt")) == "renamed")
        #expect(try await fixture.service.trashItems().items.isEmpty)
        try await expectRestorableVersion("/Docs/a.txt", "Docs/a.txt", "old")
        try await expectRestorableVersion("/c.txt", "c.txt", "old c")
    }

    @Test func importReplacingKeepsTheOldOneAsAVersion() async throws {
        directory.make(["host/photo.png": "new photo", fixture.user("Import/photo.png"): "old photo"])
        let results = try await session.perform(ImportItems([directory.url("host/photo.png")], conflict: .replace))
        #expect(results.allSatisfy { (try? $0.outcome.get()) != nil })
        #expect(directory.contents(fixture.user("Import/photo.png")) == "new photo")
        try await expectRestorableVersion("/Import/photo.png", "Import/photo.png", "old photo")
    }

    @Test func anUploadsCommitReplacingKeepsTheOldOneAsAVersion() async throws {
        directory.make([fixture.user("up.bin"): "old upload"])
        let id = try await session.perform(BeginUpload(try fixture.path("/up.bin"), conflict: .replace))
        _ = try await session.perform(AppendUpload(id, offset: 0, bytes: Array("new upload".utf8)))
        _ = try await session.perform(CommitUpload(id))
        #expect(directory.contents(fixture.user("up.bin")) == "new upload")
        try await expectRestorableVersion("/up.bin", "up.bin", "old upload")
    }

    /// Cancelled while the new item is being made: the old one never moved, and nothing
    /// partial is left beside it.
    @Test func aCancelledReplaceLeavesTheOldItemInPlace() async throws {
        directory.make([fixture.user("X/big.bin"): "old"])
        try Data(repeating: 7, count: 512 << 20).write(to: URL(fileURLWithPath: directory.url(fixture.user("big.bin"))))
        let session = self.session
        let task = Task {
            try await session.perform(CopyItem(try VirtualPath(parsing: "/big.bin"), to: .into(try VirtualPath(parsing: "/X")),
                                               conflict: .replace))
        }
        let folder = directory.url(fixture.user("X"))
        for _ in 0..<5000 {
            if (try FileManager.default.contentsOfDirectory(atPath: folder)).contains(where: { $0.hasPrefix(".coffer-partial-") }) {
                break
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        task.cancel()
        let outcome = await task.result
        if case .success = outcome {
            // The copy won the race: then it is whole, and the old one is a version.
            #expect(directory.contents(fixture.user("X/big.bin"))?.utf8.count == 512 << 20)
            #expect(try await fixture.service.versions(of: try fixture.path("/X/big.bin")).count == 1)
        } else {
            #expect(directory.contents(fixture.user("X/big.bin")) == "old")
            #expect(try await fixture.service.versions(of: try fixture.path("/X/big.bin")).isEmpty)
        }
        #expect(try await fixture.service.trashItems().items.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["big.bin"])
    }

    @Test func theQuestionIsToldWhatIsThere() async throws {
        directory.make([fixture.user("a.txt"): "new", fixture.user("X/a.txt/1.jpg"): "12345", fixture.user("X/a.txt/sub/2.jpg"): "12"])
        let told = Told()
        session.conflictQuestion = { conflict in
            told.value.withLock { $0 = conflict }
            return .replaceFolder
        }
        _ = try await session.perform(CopyItem(try fixture.path("/a.txt"), to: .into(try fixture.path("/X")), conflict: .ask))
        let conflict = try #require(told.value.withLock { $0 })
        #expect(conflict.existing?.kind == .folder)
        #expect(conflict.contents?.files == 2)
        #expect(conflict.contents?.folders == 1)
        #expect(conflict.contents?.bytes ?? 0 >= 7)
        #expect(directory.contents(fixture.user("X/a.txt")) == "new")
        try await expectRestorable("/X/a.txt", files: ["X/a.txt/1.jpg": "12345", "X/a.txt/sub/2.jpg": "12"])
    }
}

private final class Told: Sendable {
    let value = Mutex<NameConflict?>(nil)
}
