@testable import CofferBackends
@_spi(Engine) import CofferCore
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Testing

/// The trash on real containers: the freedesktop.org layout, round trips, conflicts,
/// emptying, and the crash cases between the information file and the move.
struct TrashTests {
    let directory = TemporaryDirectory("trash")
    let container: Container
    let service: FileService

    init() async throws {
        container = try await Container.open(at: directory.url("c"))
        service = try FileService.standard(container: container)
    }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }
    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }
    func trash(_ relative: String) -> String { "c/Library/Trash/" + relative }

    @Test func trashingWritesTheSpecificationsLayout() async throws {
        directory.make([user("Docs/a b%c 报告.txt"): "hello"])
        let before = Date()
        let item = try await service.trash(try path("/Docs/a b%c 报告.txt"))
        let after = Date()
        #expect(item.id == "a b%c 报告.txt")
        #expect(!directory.exists(user("Docs/a b%c 报告.txt")))
        #expect(directory.contents(trash("files/a b%c 报告.txt")) == "hello")
        let info = try #require(directory.contents(trash("info/a b%c 报告.txt.trashinfo")))
        let lines = info.split(separator: "\n").map(String.init)
        #expect(lines[0] == "[Trash Info]")
        #expect(lines[1] == "Path=\(TrashBackend.canonical(container.userFilesPath))/Docs/a%20b%25c%20%E6%8A%A5%E5%91%8A.txt")
        #expect(lines[2].range(of: #"^DeletionDate=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$"#, options: .regularExpression) != nil)
        #expect(lines[3] == "X-Coffer-Path=files%3A/Docs/a%20b%25c%20%E6%8A%A5%E5%91%8A.txt")
        // The date is local time, to the second: within the call, its fraction cut off. (Not
        // "within a few seconds of now": a loaded machine can take longer than that.)
        let date = try #require(item.deletionDate)
        #expect(date >= before.addingTimeInterval(-1) && date <= after)
        #expect(lines[2] == "DeletionDate=\(TrashInfo.format(date))")
    }

    @Test func filesAndFoldersGoAndComeBackWhole() async throws {
        directory.make([user("Photos/2026/一.jpg"): "1", user("Photos/2026/two 2.jpg"): "2", user("notes.txt"): "n"])
        try await service.trash(try path("/Photos"))
        try await service.trash(try path("/notes.txt"))
        let listing = try await service.trashItems()
        #expect(Set(listing.items.map(\.id)) == ["Photos", "notes.txt"])
        #expect(listing.problems.isEmpty)
        let photos = try #require(listing.items.first { $0.id == "Photos" })
        #expect(photos.originalPath == (try path("files:/Photos")))
        #expect(photos.node.kind == .folder)
        #expect((photos.size ?? 0) >= 8192)  // du -B1: the folders' blocks and the files'
        #expect(directory.contents(trash("directorysizes"))?.hasSuffix(" Photos\n") == true)

        #expect(try await service.restore("Photos", conflict: .fail) == (try path("/Photos")))
        #expect(try await service.restore("notes.txt", conflict: .fail) == (try path("/notes.txt")))
        #expect(directory.contents(user("Photos/2026/一.jpg")) == "1")
        #expect(directory.contents(user("Photos/2026/two 2.jpg")) == "2")
        #expect(directory.contents(user("notes.txt")) == "n")
        #expect(directory.names(trash("files")).isEmpty && directory.names(trash("info")).isEmpty)
    }

    @Test func oneFolderDeletedForGoodLeavesTheOthersSizes() async throws {
        directory.make([user("Photos/a.jpg"): "1", user("Music/b.mp3"): "2"])
        try await service.trash(try path("/Photos"))
        try await service.trash(try path("/Music"))
        _ = try await service.trashItems()
        #expect(directory.contents(trash("directorysizes"))?.contains(" Photos\n") == true)
        try await service.deleteFromTrash("Photos")
        #expect(directory.names(trash("files")) == ["Music"] && directory.names(trash("info")) == ["Music.trashinfo"])
        let sizes = try #require(directory.contents(trash("directorysizes")))
        #expect(!sizes.contains(" Photos\n") && sizes.hasSuffix(" Music\n"))
        await #expect(throws: CofferError.self) { try await service.deleteFromTrash("Photos") }
    }

    @Test func sameNamesGetDistinctIdsAndEachGoesBack() async throws {
        directory.make([user("a/x.txt"): "from a", user("b/x.txt"): "from b"])
        let first = try await service.trash(try path("/a/x.txt"))
        let second = try await service.trash(try path("/b/x.txt"))
        #expect(first.id == "x.txt" && second.id == "x (2).txt")
        try await service.restore("x (2).txt", conflict: .fail)
        try await service.restore("x.txt", conflict: .fail)
        #expect(directory.contents(user("a/x.txt")) == "from a")
        #expect(directory.contents(user("b/x.txt")) == "from b")
    }

    @Test func restoreRecreatesMissingFolders() async throws {
        directory.make([user("Deep/er/file.txt"): "f"])
        try await service.trash(try path("/Deep/er/file.txt"))
        try await service.trash(try path("/Deep"))
        try await service.restore("file.txt", conflict: .fail)
        #expect(directory.contents(user("Deep/er/file.txt")) == "f")
    }

    @Test func restoreConflictsFailOrKeepBoth() async throws {
        directory.make([user("a.txt"): "old"])
        try await service.trash(try path("/a.txt"))
        directory.make([user("a.txt"): "new"])
        await #expect(throws: CofferError.self) { try await service.restore("a.txt", conflict: .fail) }
        #expect(directory.contents(user("a.txt")) == "new")
        #expect(directory.contents(trash("files/a.txt")) == "old")

        #expect(try await service.restore("a.txt", conflict: .keepBoth) == (try path("/a (2).txt")))
        #expect(directory.contents(user("a (2).txt")) == "old")
        #expect(try await service.trashItems().items.isEmpty)
    }

    @Test func replacingOnRestoreKeepsTheFileInTheWayAsAVersion() async throws {
        directory.make([user("r.txt"): "trashed"])
        try await service.trash(try path("/r.txt"))
        directory.make([user("r.txt"): "current"])
        try await service.restore("r.txt", conflict: .replace)
        #expect(directory.contents(user("r.txt")) == "trashed")
        #expect(try await service.trashItems().items.isEmpty)
        let versions = try await service.versions(of: try path("/r.txt"))
        #expect(versions.count == 1)
        #expect(directory.contents("c/Library/Versions/files/\(try #require(versions.first).id)") == "current")
    }

    @Test func replacingOnRestoreTrashesAFolderInTheWay() async throws {
        directory.make([user("r.txt"): "trashed"])
        try await service.trash(try path("/r.txt"))
        directory.make([user("r.txt/inside.txt"): "current"])
        try await service.restore("r.txt", conflict: .replaceFolder)
        #expect(directory.contents(user("r.txt")) == "trashed")
        let listing = try await service.trashItems()
        #expect(listing.items.count == 1)
        #expect(directory.contents(trash("files/\(listing.items[0].id)/inside.txt")) == "current")
    }

    @Test func emptyingByAgeKeepsRecentItems() async throws {
        directory.make([user("old.txt"): "o", user("new.txt"): "n"])
        let trashBackend = try #require(service.trashBackend)
        let files = try #require(service.mounts.first { $0.name == "files" }).backend
        _ = try await trashBackend.put(try path("/old.txt"), from: files, date: Date().addingTimeInterval(-40 * 86_400))
        try await service.trash(try path("/new.txt"))
        #expect(try await service.emptyTrash(olderThan: Date().addingTimeInterval(-30 * 86_400)) == 1)
        #expect(try await service.trashItems().items.map(\.id) == ["new.txt"])
        #expect(try await service.emptyTrash() == 1)
        #expect(directory.names(trash("files")).isEmpty && directory.names(trash("info")).isEmpty)
    }

    @Test func crashAfterTheInfoFileLeavesTheOriginalAndIsReported() async throws {
        // The info file was written, then the process died before the move.
        directory.make([user("kept.txt"): "safe",
                        trash("info/kept.txt.trashinfo"): "[Trash Info]\nPath=/x/kept.txt\nDeletionDate=2026-01-01T00:00:00\n"])
        let listing = try await service.trashItems()
        #expect(listing.items.isEmpty)
        #expect(listing.problems == [TrashProblem(id: "kept.txt", reason: .missingItem)])
        #expect(directory.contents(user("kept.txt")) == "safe")
        // Trashing it now picks another name; emptying clears the stray info file.
        #expect(try await service.trash(try path("/kept.txt")).id == "kept (2).txt")
        try await service.restore("kept (2).txt", conflict: .fail)
        try await service.emptyTrash()
        #expect(directory.names(trash("info")).isEmpty)
        #expect(directory.contents(user("kept.txt")) == "safe")
    }

    @Test func anItemWithoutInformationIsListedReportedAndRestorable() async throws {
        directory.make([trash("files/orphan.txt"): "o", trash("files/bad.txt"): "b",
                        trash("info/bad.txt.trashinfo"): "not an info file"])
        let listing = try await service.trashItems()
        #expect(Set(listing.items.map(\.id)) == ["orphan.txt", "bad.txt"])
        #expect(Set(listing.problems) == [TrashProblem(id: "orphan.txt", reason: .missingInfo),
                                          TrashProblem(id: "bad.txt", reason: .damagedInfo)])
        #expect(listing.items.allSatisfy { $0.isForeign && $0.deletionDate == nil })
        #expect(try await service.restore("orphan.txt", conflict: .fail) == (try path("/orphan.txt")))
        #expect(try await service.restore("bad.txt", conflict: .fail) == (try path("/bad.txt")))
        #expect(directory.contents(user("orphan.txt")) == "o")
    }

    @Test func theTrashIsBrowsableButReadOnly() async throws {
        directory.make([user("t.txt"): "t"])
        try await service.trash(try path("/t.txt"))
        #expect(try await service.list(try path("trash:/")).items.map(\.name) == ["t.txt"])
        await #expect(throws: CofferError.self) { try await service.createFolder(at: try path("trash:/x")) }
        await #expect(throws: CofferError.self) { try await service.trash(try path("trash:/t.txt")) }
        await #expect(throws: CofferError.self) { try await service.move(try path("trash:/t.txt"), to: try path("/t.txt"), conflict: .fail) }
        // files: never shows the trash.
        #expect(try await service.list(.root(), options: ListOptions(includeHidden: true)).items.map(\.name)
                == ["Download", "Import"])
    }

    @Test func idsArePlainNames() async throws {
        await #expect(throws: CofferError.self) { try await service.restore("../../Documents", conflict: .fail) }
        await #expect(throws: CofferError.self) { try await service.restore("a/b", conflict: .fail) }
        await #expect(throws: CofferError.self) { try await service.restore("missing", conflict: .fail) }
    }

    @Test func infoFilesReadWhatOtherImplementationsWrite() {
        let info = TrashInfo(parsing: "# comment\n[Trash Info]\nDeletionDate=2004-08-31T22:32:08\nPath=/home/a%20b/%E6%8A%A5\nX-Other=1\n")
        #expect(info?.path == "/home/a b/报")
        #expect(info?.deletionDate.map(TrashInfo.format) == "2004-08-31T22:32:08")
        #expect(TrashInfo(parsing: "[Other]\nPath=/x\n") == nil)
        #expect(TrashInfo(parsing: "[Trash Info]\nPath=/bad%zz\n") == nil)
        #expect(TrashInfo.percentEncoded("a b/%~_.-Z9é") == "a%20b/%25~_.-Z9%C3%A9")
    }

    @Test func exportStagesComeAndGoAndOldOnesAreSwept() async throws {
        let staging = try #require(service.stagingBackend)
        let stage = try await staging.makeStage()
        #expect(stage.mount == "staging" && directory.names("c/Documents/ExportTemp") == [stage.name])
        try await staging.removeStage(stage)
        #expect(directory.names("c/Documents/ExportTemp").isEmpty)
        #expect(service.mounts.first { $0.name == "staging" }?.isVisible == false)

        directory.make(["c/Documents/ExportTemp/stage-old/x": "x", "c/Documents/ExportTemp/stage-new/y": "y"])
        let old = Date().addingTimeInterval(-2 * 86_400)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: directory.url("c/Documents/ExportTemp/stage-old"))
        _ = try await Container.open(at: directory.url("c"))
        #expect(directory.names("c/Documents/ExportTemp") == ["stage-new"])
    }
}

extension TrashTests {
    @Test func restoreFollowsTheVirtualPathAfterTheContainerMoved() async throws {
        directory.make([user("Projects/plan.txt"): "p"])
        try await service.trash(try path("/Projects/plan.txt"))
        // Move the whole container: Path= now names a folder that is gone.
        try FileManager.default.moveItem(atPath: directory.url("c"), toPath: directory.url("moved"))
        let moved = try FileService.standard(container: try await Container.open(at: directory.url("moved")))
        #expect(try await moved.trashItems().items.map(\.isForeign) == [false])
        #expect(try await moved.restore("plan.txt", conflict: .fail) == (try path("/Projects/plan.txt")))
        #expect(directory.contents("moved/Documents/UserFiles/Projects/plan.txt") == "p")
    }
}

extension TrashTests {
    @Test func longNamesAndNewlinesSurviveTheTrip() async throws {
        let long = String(repeating: "报", count: 83) + ".txt"  // 253 bytes: no room for “.trashinfo”
        let odd = "two\nlines %0A.txt"
        directory.make([user(long): "long", user(odd): "odd"])
        let item = try await service.trash(try path("/" + long))
        #expect(item.id.utf8.count + ".trashinfo".utf8.count <= 255)
        let oddItem = try await service.trash(try path("/" + odd))
        #expect(directory.contents(trash("info/\(oddItem.id).trashinfo"))?.contains("two%0Alines%20%250A.txt") == true)
        try await service.restore(item.id, conflict: .fail)
        try await service.restore(oddItem.id, conflict: .fail)
        #expect(directory.contents(user(long)) == "long")
        #expect(directory.contents(user(odd)) == "odd")
    }
}

/// Someone else's backend over a local folder: every call goes to a local sandbox.
protocol ForwardingToLocal: StorageBackend {
    var inner: LocalSandboxBackend { get }
}

extension ForwardingToLocal {
    var capabilities: BackendCapabilities { inner.capabilities }
    func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] { try await inner.contentsOfFolder(at: path) }
    func node(at path: VirtualPath) async throws -> FileNode { try await inner.node(at: path) }
    func createFolder(at path: VirtualPath) async throws { try await inner.createFolder(at: path) }
    func openFile(at path: VirtualPath) async throws -> any ReadableFile { try await inner.openFile(at: path) }
    func makeWrite(at path: VirtualPath) async throws -> any PendingWrite { try await inner.makeWrite(at: path) }
    func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        try await inner.moveItem(at: source, to: destination, conflict: conflict)
    }
    func removeItem(at path: VirtualPath) async throws { try await inner.removeItem(at: path) }
}

/// Without the rename capability.
struct ForwardingBackend: ForwardingToLocal {
    let inner: LocalSandboxBackend
}

/// With it, offered through its own code.
struct RenamingBackend: ForwardingToLocal, LocalFolderBackend {
    let inner: LocalSandboxBackend
    func withParentFolder<T>(of path: VirtualPath,
                             _ body: (Int32, String) throws(CofferError) -> T) throws(CofferError) -> T {
        try inner.withParentFolder(of: path, body)
    }
}

extension TrashTests {
    func inode(_ relative: String) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: directory.url(relative))[.systemFileNumber] as? UInt64)
    }

    /// The fast path is a capability any backend may offer, not a privilege of Coffer's own:
    /// with it the trash renames (the inode stays the same both ways), without it it copies.
    @Test(arguments: [true, false])
    func aBackendOfItsOwnChoosesRenameOrCopy(offersRename: Bool) async throws {
        directory.make(["c/Documents/UserFiles/Theirs/a.txt": "theirs"])
        let local = try LocalSandboxBackend(rootPath: directory.url("c/Documents/UserFiles/Theirs"), syncBeforeCommit: false)
        let backend: any StorageBackend = offersRename ? RenamingBackend(inner: local) : ForwardingBackend(inner: local)
        let trashBackend = try TrashBackend(path: container.trashPath)
        let theirs = VirtualPath.root(of: "theirs").appending(trustedName: "a.txt")
        let before = try inode(user("Theirs/a.txt"))
        let item = try await trashBackend.put(theirs, from: backend)
        let trashed = try inode(trash("files/a.txt"))
        #expect((trashed == before) == offersRename)
        #expect(!directory.exists(user("Theirs/a.txt")))
        try await trashBackend.restore(item.id, to: theirs, in: backend, conflict: .fail)
        #expect(directory.contents(user("Theirs/a.txt")) == "theirs")
        // (Against the trashed one, which exists while a copy is made: a freed inode number
        // may be given again, so the original's says nothing.)
        #expect((try inode(user("Theirs/a.txt")) == trashed) == offersRename)
        #expect(directory.names(trash("files")).isEmpty && directory.names(trash("info")).isEmpty)
    }

    /// Days to a cutoff, one rule for the REPL's `--older-than` and RPC's `olderThanDays`.
    @Test func daysBecomeOneCutoffForEveryFrontEnd() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try EmptyTrash(olderThanDays: 30, now: now).cutoff == now.addingTimeInterval(-30 * 86_400))
        #expect(try EmptyTrash(olderThanDays: 0.5, now: now).cutoff == now.addingTimeInterval(-43_200))
        #expect(try EmptyTrash(olderThanDays: nil).cutoff == nil)
        for bad in [-1, Double.infinity, Double.nan] {
            #expect(throws: CofferError.self) { try EmptyTrash(olderThanDays: bad) }
        }
    }
}
