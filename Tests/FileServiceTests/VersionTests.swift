import CofferCore
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Testing

/// Versions on a real container: every save and replace keeps what the file had, the
/// versions follow the file through moves and the trash, a restore gives the bytes back, and
/// pruning keeps what the retention rules keep.
struct VersionTests {
    let fixture: ServiceFixture
    var service: FileService { fixture.service }
    var session: Session { fixture.session }
    var directory: TemporaryDirectory { fixture.directory }

    init() async throws { fixture = try await ServiceFixture("versions") }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }

    func save(_ text: String, at place: String) async throws {
        _ = try await session.perform(WriteFile(try path(place), bytes: Array(text.utf8), conflict: .replace))
    }

    func content(ofVersion id: Int, of place: String) async throws -> String {
        let file = try await service.openVersion(id, of: try path(place))
        let bytes = try await file.read(upTo: 1 << 20)
        await file.close()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Sets the file's modification time, as `touch -d` does.
    func plant(_ place: String, at date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: directory.url("c/Documents/UserFiles" + place))
    }

    @Test func everySaveKeepsWhatTheFileHadAndARestoreGivesItBack() async throws {
        try await save("v0", at: "/notes.txt")
        for index in 1...5 { try await save("v\(index)", at: "/notes.txt") }
        let versions = try await session.perform(ListVersions(try path("/notes.txt")))
        #expect(versions.count == 5)
        // Newest first; each is what a save replaced, recorded with who replaced it.
        var contents: [String] = []
        for version in versions { contents.append(try await content(ofVersion: version.id, of: "/notes.txt")) }
        #expect(contents == ["v4", "v3", "v2", "v1", "v0"])
        #expect(versions.allSatisfy { $0.frontEnd == "test" && $0.session == session.id && $0.size == 2 })
        // The second version back: the file has its bytes, and what it had is a version after it.
        let second = versions[versions.count - 2]
        _ = try await session.perform(RestoreVersion(second.id, of: try path("/notes.txt")))
        #expect(directory.contents("c/Documents/UserFiles/notes.txt") == "v1")
        let after = try await session.perform(ListVersions(try path("/notes.txt")))
        #expect(after.count == 6)
        #expect(try await content(ofVersion: after[0].id, of: "/notes.txt") == "v5")
        // Nothing went to the trash.
        #expect(try await service.trashItems().items.isEmpty)
    }

    @Test func aReplaceKilledAfterLinkingTheFileInLeavesNoSecondVersion() async throws {
        try await save("v1", at: "/a.txt")
        // What a replace killed between linking the file into the store and placing the new one
        // leaves (in an earlier process: a replace of this one may still be placing its file).
        let store = try #require(service.feature(VersionStore.self))
        let id = try await store.enter(try await service.stat(try path("/a.txt")), author: nil, now: Date(timeIntervalSinceNow: -60))
        #expect(link(directory.url("c/Documents/UserFiles/a.txt"), store.contentHostPath(id)) == 0)
        #expect(try await service.versions(of: try path("/a.txt")).isEmpty)   // it is the file itself
        try await save("v2", at: "/a.txt")
        let versions = try await service.versions(of: try path("/a.txt"))
        #expect(versions.count == 1)
        #expect(try await content(ofVersion: try #require(versions.first?.id), of: "/a.txt") == "v1")
    }

    @Test func aVersionRestoredBesideTheFileLeavesItAlone() async throws {
        try await save("old", at: "/a.txt")
        try await save("new", at: "/a.txt")
        let id = try #require(try await service.versions(of: try path("/a.txt")).first?.id)
        let node = try await session.perform(RestoreVersion(id, of: try path("/a.txt"), as: "a (old).txt"))
        #expect(node.path == (try path("/a (old).txt")))
        #expect(directory.contents("c/Documents/UserFiles/a.txt") == "new")
        #expect(directory.contents("c/Documents/UserFiles/a (old).txt") == "old")
        // A taken name is refused, and a version of another file is not this file's.
        await #expect(throws: CofferError.self) { try await session.perform(RestoreVersion(id, of: try path("/a.txt"), as: "a.txt")) }
        await #expect(throws: CofferError.self) { try await session.perform(RestoreVersion(id, of: try path("/a (old).txt"))) }
    }

    @Test func keepingAVersionOnTheSandboxCopiesNothing() async throws {
        try await save("first", at: "/a.txt")
        var before = stat()
        #expect(lstat(directory.url("c/Documents/UserFiles/a.txt"), &before) == 0)
        try await save("second", at: "/a.txt")
        let id = try #require(try await service.versions(of: try path("/a.txt")).first?.id)
        var kept = stat()
        #expect(lstat(directory.url("c/Library/Versions/files/\(id)"), &kept) == 0)
        // The replaced file itself, renamed: the same inode.
        #expect(kept.st_ino == before.st_ino)
    }

    @Test func aSaveByRenameOverTheFileKeepsOneVersionAndTrashesNothing() async throws {
        // As LibreOffice saves: a temporary file written beside it, then renamed over it.
        try await save("draft 1", at: "/report.odt")
        try await save("draft 2", at: "/.~lock-tmp")
        _ = try await session.perform(MoveItem(try path("/.~lock-tmp"), to: .exactly(try path("/report.odt")), conflict: .replace))
        let versions = try await service.versions(of: try path("/report.odt"))
        #expect(versions.count == 1)
        #expect(try await content(ofVersion: versions[0].id, of: "/report.odt") == "draft 1")
        #expect(try await service.trashItems().items.isEmpty)
    }

    @Test func anAppendKeepsWhatTheFileHad() async throws {
        try await save("one\n", at: "/log.txt")
        _ = try await session.perform(AppendToFile(try path("/log.txt"), bytes: Array("two\n".utf8)))
        #expect(directory.contents("c/Documents/UserFiles/log.txt") == "one\ntwo\n")
        let versions = try await service.versions(of: try path("/log.txt"))
        #expect(versions.count == 1)
        #expect(try await content(ofVersion: versions[0].id, of: "/log.txt") == "one\n")
    }

    @Test func versionsFollowTheFileThroughMovesAndTheTrash() async throws {
        _ = try await session.perform(CreateFolder(try path("/Docs")))
        try await save("a", at: "/Docs/a.txt")
        try await save("b", at: "/Docs/a.txt")
        _ = try await session.perform(RenameItem(try path("/Docs/a.txt"), to: "b.txt"))
        _ = try await session.perform(MoveItem(try path("/Docs"), to: .exactly(try path("/Papers"))))
        #expect(try await service.versions(of: try path("/Papers/b.txt")).count == 1)
        #expect(try await service.versions(of: try path("/Docs/a.txt")).isEmpty)
        // To the trash with its folder, and back with it.
        let trashed = try #require(try await session.perform(TrashItems([try path("/Papers")])).first?.get())
        #expect(try await service.versions(of: try path("/Papers/b.txt")).isEmpty)
        _ = try await session.perform(RestoreItem(.id(trashed.id)))
        let back = try await service.versions(of: try path("/Papers/b.txt"))
        #expect(back.count == 1)
        // Emptying the trash deletes them with it.
        _ = try await session.perform(TrashItems([try path("/Papers")]))
        _ = try await session.perform(EmptyTrash())
        #expect(!FileManager.default.fileExists(atPath: directory.url("c/Library/Versions/files/\(back[0].id)")))
        #expect(try await service.versions(of: try path("/Papers/b.txt")).isEmpty)
    }

    @Test func aFileWithoutVersionsAndAnUnknownVersion() async throws {
        try await save("x", at: "/x.txt")
        #expect(try await service.versions(of: try path("/x.txt")).isEmpty)
        #expect(try await service.versions(of: try path("/missing.txt")).isEmpty)
        await #expect(throws: CofferError.self) { try await session.perform(RestoreVersion(99, of: try path("/x.txt"))) }
        do {
            _ = try await service.openVersion(99, of: try path("/x.txt"))
            Issue.record("an unknown version opened")
        } catch {
            #expect(error.kind == .noSuchFile)
        }
    }

    @Test func pruningKeepsWhatThePolicyKeepsAndDropsTheRest() async throws {
        let now = Date()
        // Eight saves, the replaced contents dated a day apart (planted as `touch -d` would).
        try await save("s0", at: "/p.txt")
        for day in 1...8 {
            try plant("/p.txt", at: now.addingTimeInterval(Double(-9 + day) * 86_400))
            try await save("s\(day)", at: "/p.txt")
        }
        let versions = try await service.versions(of: try path("/p.txt"))
        #expect(versions.count == 8)
        let policy = RetentionPolicy(keepLast: 3)
        let dry = try await session.perform(PruneVersions(policy: policy, sizeLimit: 1 << 30, below: nil, dryRun: true))
        #expect(dry.decisions.filter(\.keep).map(\.version.id) == Array(versions.prefix(3).map(\.id)))
        #expect(dry.decisions.filter(\.keep).allSatisfy { $0.reasons == ["last snapshot"] })
        #expect(try await service.versions(of: try path("/p.txt")).count == 8)
        _ = try await session.perform(PruneVersions(policy: policy, sizeLimit: 1 << 30, below: nil, dryRun: false))
        #expect(try await service.versions(of: try path("/p.txt")).map(\.id) == Array(versions.prefix(3).map(\.id)))
        // Over the size limit, the oldest kept go first.
        let limited = try await session.perform(PruneVersions(policy: policy, sizeLimit: 4, below: nil, dryRun: true))
        #expect(limited.decisions.filter(\.keep).map(\.version.id) == Array(versions.prefix(2).map(\.id)))
        #expect(limited.decisions.last?.reasons == ["over the size limit"])
    }
}
