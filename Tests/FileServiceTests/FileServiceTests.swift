import CofferBackends
import CofferCore
import CofferTestSupport
@_spi(Engine) import FileService
import Foundation
import Testing

struct FileServiceTests {
    let directory = TemporaryDirectory("service")
    let service: FileService

    init() throws {
        directory.make(["files/report.pdf": "r1", "files/Docs/a.txt": "a", "files/.secret": "s",
                        "files/b.txt": "b", "other/": ""])
        let files = try LocalSandboxBackend(rootPath: directory.url("files"), syncBeforeCommit: false)
        let other = try LocalSandboxBackend(rootPath: directory.url("other"), syncBeforeCommit: false)
        let readOnly = try LocalSandboxBackend(rootPath: directory.url("other"), writable: false)
        service = FileService(mounts: [Mount(name: "files", backend: files), Mount(name: "other", backend: other),
                                       Mount(name: "ro", backend: readOnly)])
    }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }

    @Test func listsFoldersFirstHidingHiddenItemsAndPages() async throws {
        let page = try await service.list(.root())
        #expect(page.items.map(\.name) == ["Docs", "b.txt", "report.pdf"])
        let all = try await service.list(.root(), options: ListOptions(includeHidden: true))
        #expect(all.items.map(\.name) == ["Docs", ".secret", "b.txt", "report.pdf"])
        let first = try await service.list(.root(), options: ListOptions(offset: 0, limit: 2))
        #expect(first.items.map(\.name) == ["Docs", "b.txt"])
        #expect(first.total == 3 && first.nextOffset == 2)
        let second = try await service.list(.root(), options: ListOptions(offset: 2, limit: 2))
        #expect(second.items.map(\.name) == ["report.pdf"] && second.nextOffset == nil)
    }

    @Test func keepBothPicksTheNextFreeNameKeepingTheExtension() async throws {
        let first = try await service.copy(try path("/report.pdf"), to: try path("/report.pdf"), conflict: .keepBoth)
        #expect(first.name == "report (2).pdf")
        let second = try await service.copy(try path("/report.pdf"), to: try path("/report.pdf"), conflict: .keepBoth)
        #expect(second.name == "report (3).pdf")
        #expect(directory.contents("files/report (3).pdf") == "r1")
        #expect(directory.contents("files/report.pdf") == "r1")
    }

    @Test func conflictsFailByDefaultAndReplaceOnRequest() async throws {
        await #expect(throws: CofferError.self) {
            try await service.rename(try path("/b.txt"), to: "report.pdf", conflict: .fail)
        }
        #expect(directory.contents("files/report.pdf") == "r1")
        #expect(directory.contents("files/b.txt") == "b")
        // A service without a trash has nowhere to put what a replace displaces: it refuses.
        let refused = await thrownError(of: try await service.rename(try path("/b.txt"), to: "report.pdf", conflict: .replace))
        #expect(refused?.kind == .unsupported)
        #expect(directory.contents("files/report.pdf") == "r1")
        #expect(directory.contents("files/b.txt") == "b")
    }

    @Test func destinationsFollowShellRulesOrGoIntoAFolder() async throws {
        let session = try service.openSession(SessionOptions(frontEnd: "test"))
        // Named as a shell names it: into an existing folder, else that very name.
        #expect(try await session.perform(CopyItem(try path("/b.txt"), to: .named(try path("/Docs")))).path.description
                == "files:/Docs/b.txt")
        #expect(try await session.perform(CopyItem(try path("/b.txt"), to: .named(try path("/new.txt")))).path.description
                == "files:/new.txt")
        // Into a folder, keeping both names by default; never into a file.
        #expect(try await session.perform(CopyItem(try path("/b.txt"), to: .into(try path("/Docs")))).path.description
                == "files:/Docs/b (2).txt")
        let intoFile = await thrownError(of: try await session.perform(CopyItem(try path("/b.txt"), to: .into(try path("/new.txt")))))
        #expect(intoFile?.kind == .notADirectory)
        // Moves fail on a taken name unless told.
        let taken = await thrownError(of: try await session.perform(MoveItem(try path("/b.txt"), to: .into(try path("/Docs")))))
        #expect(taken?.kind == .fileExists)
        await session.close()
    }

    @Test func refusesAFolderIntoItself() async throws {
        for operation in ["copy", "move"] {
            do {
                if operation == "copy" {
                    try await service.copy(try path("/Docs"), to: try path("/Docs/inner"), conflict: .fail)
                } else {
                    try await service.move(try path("/Docs"), to: try path("/Docs/inner"), conflict: .fail)
                }
                Issue.record("\(operation) into itself succeeded")
            } catch {
                #expect(error.kind == .invalidOperation)
            }
        }
        #expect(directory.names("files/Docs") == ["a.txt"])
    }

    @Test func movesAcrossMountsCopyingThenRemoving() async throws {
        let moved = try await service.move(try path("/Docs"), to: try path("other:/Docs"), conflict: .fail)
        #expect(moved.description == "other:/Docs")
        #expect(directory.contents("other/Docs/a.txt") == "a")
        #expect(!directory.exists("files/Docs"))
    }

    @Test func aFailedCrossMountMoveKeepsTheSource() async throws {
        directory.make(["other/Docs/keep.txt": "k"])
        await #expect(throws: CofferError.self) { try await service.move(try path("/Docs"), to: try path("other:/Docs"), conflict: .fail) }
        #expect(directory.contents("files/Docs/a.txt") == "a")
        #expect(directory.names("other/Docs") == ["keep.txt"])
        #expect(directory.names("other").allSatisfy { !$0.hasPrefix(".coffer") })
    }

    @Test func readOnlyMountsRefuseChanges() async throws {
        do {
            try await service.copy(try path("/b.txt"), to: try path("ro:/b.txt"), conflict: .fail)
            Issue.record("wrote to a read-only mount")
        } catch {
            #expect(error.kind == .readOnly)
        }
        #expect(!directory.exists("other/b.txt"))
    }

    @Test func unknownMountsAreReported() async throws {
        do {
            _ = try await service.list(try path("nowhere:/"))
            Issue.record("listed an unknown mount")
        } catch {
            #expect(error.kind == .unknownMount)
        }
    }

    @Test func createsFoldersWithIntermediates() async throws {
        try await service.createFolder(at: try path("/x/y/报告"), intermediates: true)
        #expect(directory.exists("files/x/y/报告"))
        try await service.createFolder(at: try path("/x/y"), intermediates: true)  // existing: fine
        do {
            try await service.createFolder(at: try path("/b.txt/z"), intermediates: true)
            Issue.record("made a folder below a file")
        } catch {
            #expect(error.kind == .notADirectory)
        }
        await #expect(throws: CofferError.self) { try await service.createFolder(at: try path("/x")) }
    }

    @Test func walksDepthLimitedAndAddsUpSizes() async throws {
        directory.make(["files/Docs/Deep/deeper/z.txt": "zzz"])
        let session = try service.openSession(SessionOptions(frontEnd: "test"))
        var seen: [String] = []
        let walk = try await session.perform(WalkTree(.root(), maxDepth: 2))
        let summary = try await walk.visit { entry in seen.append("\(entry.relativePath)\(entry.isLast ? " (last)" : "")") }
        #expect(seen == ["Docs", "Docs/Deep", "Docs/a.txt (last)", "b.txt", "report.pdf (last)"])
        #expect(summary.items == 5 && !summary.truncated)
        // A limit stops it and says so; what is left out does not count.
        seen = []
        let limited = try await session.perform(WalkTree(.root(), limit: 2, excluding: { _, name in name == "Deep" }))
        #expect(try await limited.visit { entry in seen.append(entry.relativePath) }.truncated)
        #expect(seen == ["Docs", "Docs/a.txt"])
        let usage = try await service.diskUsage(.root())
        #expect(usage.bytes == 2 + 1 + 1 + 1 + 3)  // r1, a, s, b, zzz
        #expect(usage.files == 5 && usage.folders == 3)
    }
}

struct ContainerTests {
    @Test func createsTheLayout() async throws {
        let directory = TemporaryDirectory("container")
        let container = try await Container.open(at: directory.url("c"))
        for part in Container.layout + ["Documents/UserFiles/Download", "Documents/UserFiles/Import"] {
            var isFolder: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: directory.url("c/\(part)"), isDirectory: &isFolder) && isFolder.boolValue,
                    "\(part)")
        }
        for part in Container.cacheFolders {
            #expect(directory.contents("c/\(part)/CACHEDIR.TAG")?.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55") == true)
        }
        #expect(container.userFilesPath == directory.url("c/Documents/UserFiles"))
    }

    @Test func aFileWhereAFolderBelongsIsAClearError() async throws {
        let directory = TemporaryDirectory("container")
        directory.make(["c/Documents/UserFiles": "not a folder"])
        do {
            _ = try await Container.open(at: directory.url("c"))
            Issue.record("opened a damaged container")
        } catch {
            #expect(error.kind == .damagedContainer)
            #expect(error.detail == "Documents/UserFiles")
            #expect(!error.userMessage(in: .english).description.contains(directory.path))
        }
        #expect(directory.contents("c/Documents/UserFiles") == "not a folder")
    }

    @Test func removesOldTemporaryEntriesOnly() async throws {
        let directory = TemporaryDirectory("container")
        _ = try await Container.open(at: directory.url("c"))
        directory.make(["c/tmp/old/inner.bin": "x", "c/tmp/old.txt": "x", "c/tmp/fresh.txt": "x"])
        let old = Date().addingTimeInterval(-25 * 3600)
        for name in ["old", "old.txt"] {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: directory.url("c/tmp/\(name)"))
        }
        _ = try await Container.open(at: directory.url("c"))
        #expect(directory.names("c/tmp") == ["CACHEDIR.TAG", "fresh.txt"])
    }

    @Test func defaultLocationFollowsXDG() {
        #expect(Container.defaultLocation(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == "/data/coffer")
        #expect(Container.defaultLocation(environment: ["HOME": "/home/u"]) == "/home/u/.local/share/coffer")
    }
}
