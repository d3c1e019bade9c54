import CofferBackends
import CofferCore
import CofferRuntime
import CofferTestSupport
@_spi(Engine) import FileService
import Foundation
import Synchronization
import Testing

/// A real PNG: signature, one-pixel header, image data and end.
let tinyPNG: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3A, 0x7E, 0x9B,
    0x55, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x01, 0x48, 0xAF, 0xA4, 0x71, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
]

/// A real container with its standard service, a session that may use any host path (as the
/// REPL's), and an empty host folder `host/` beside it.
struct HostFixture {
    let directory: TemporaryDirectory
    let container: Container
    let service: FileService
    let session: Session

    init(_ label: String) async throws {
        directory = TemporaryDirectory(label)
        container = try await Container.open(at: directory.url("c"))
        // What an export replaces goes to the desktop trash of a scratch home, not the tester's.
        let home = BaseDirectories(environment: ["HOME": directory.url("home")])
        service = try FileService.standard(container: container, hostTrash: HostTrash(directories: home))
        session = try service.openSession(SessionOptions(frontEnd: "test", hostAccess: .anywhere))
        try FileManager.default.createDirectory(atPath: directory.url("host"), withIntermediateDirectories: true)
    }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }
    /// A file below `files:`, relative to the fixture's folder.
    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }
}

/// Import, export and open in place against real host folders next to a real container.
struct HostBridgeTests {
    let fixture: HostFixture
    var directory: TemporaryDirectory { fixture.directory }
    var container: Container { fixture.container }
    var service: FileService { fixture.service }
    var session: Session { fixture.session }

    init() async throws { fixture = try await HostFixture("host") }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }
    func host(_ relative: String) -> String { directory.url("host/" + relative) }
    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }
    func write(_ bytes: [UInt8], to relative: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: host(relative)))
    }

    // MARK: Import

    @Test func importsFilesAndFoldersIntoImportWithOneResultEach() async throws {
        directory.make(["host/报告 2026.txt": "annual", "host/Album/a.txt": "A", "host/Album/Sub/b.txt": "B"])
        let progress = ProgressReporter()
        let results = try await session.perform(ImportItems([host("报告 2026.txt"), host("Album"), host("missing.txt")]), progress: FixedProgress(progress))
        #expect(results.count == 3)
        #expect(try results[0].outcome.get().path == path("/Import/报告 2026.txt"))
        #expect(try results[1].outcome.get().kind == .folder)
        #expect(throws: CofferError.self) { try results[2].outcome.get() }
        if case .failure(let error) = results[2].outcome { #expect(error.kind == .noSuchFile) }
        #expect(directory.contents(user("Import/报告 2026.txt")) == "annual")
        #expect(directory.contents(user("Import/Album/Sub/b.txt")) == "B")
        // The host side is untouched, and nothing temporary is left behind.
        #expect(directory.contents("host/Album/a.txt") == "A")
        #expect(directory.names(user("Import")) == ["Album", "报告 2026.txt"])
        // One progress for everything: 6 + 1 + 1 bytes, 3 files and 2 folders.
        #expect(progress.current.totalBytes == 8)
        #expect(progress.current.completedBytes == 8)
        #expect(progress.current.completedItems == progress.current.totalItems)
    }

    @Test func keepsBothByDefaultAndReplacesOnlyWhenAsked() async throws {
        directory.make(["host/photo.txt": "new", user("Import/photo.txt"): "old"])
        let first = try await session.perform(ImportItems([host("photo.txt")]))
        #expect(try first[0].outcome.get().name == "photo (2).txt")
        let second = try await session.perform(ImportItems([host("photo.txt")], conflict: .fail))
        if case .failure(let error) = second[0].outcome { #expect(error.kind == .fileExists) } else { Issue.record("imported") }
        let third = try await session.perform(ImportItems([host("photo.txt")], conflict: .replace))
        #expect(try third[0].outcome.get().name == "photo.txt")
        #expect(directory.contents(user("Import/photo.txt")) == "new")
        #expect(directory.names(user("Import")) == ["photo (2).txt", "photo.txt"])
    }

    @Test func importsIntoANamedFolderAndRefusesAFileAsDestination() async throws {
        directory.make(["host/a.txt": "a", user("Notes/"): "", user("plain.txt"): "x"])
        let results = try await session.perform(ImportItems([host("a.txt")], into: try path("/Notes")))
        #expect(try results[0].outcome.get().path == path("/Notes/a.txt"))
        await #expect(throws: CofferError.self) {
            _ = try await session.perform(ImportItems([host("a.txt")], into: try path("/plain.txt")))
        }
        await #expect(throws: CofferError.self) {
            _ = try await session.perform(ImportItems([host("a.txt")], into: try path("trash:/")))
        }
    }

    @Test func filtersByConformanceAndByContent() async throws {
        try write(tinyPNG, to: "real.png")
        directory.make(["host/fake.png": "just some text, not an image\n", "host/notes.md": "# Notes\n"])
        let results = try await session.perform(ImportItems(
            [host("real.png"), host("fake.png"), host("notes.md")], allowedTypes: ["public.image"]))
        #expect(try results[0].outcome.get().name == "real.png")
        guard case .failure(let error) = results[1].outcome else { Issue.record("a text file passed as an image"); return }
        #expect(error.kind == .typeNotAllowed)
        #expect(error.detail == "public.plain-text")
        if case .failure(let error) = results[2].outcome { #expect(error.kind == .typeNotAllowed) }
        #expect(directory.names(user("Import")) == ["real.png"])
        // Text admits Markdown: libmagic says text/plain, the name says which kind of text.
        let text = try await session.perform(ImportItems([host("notes.md")], allowedTypes: ["public.text"]))
        #expect(try text[0].outcome.get().name == "notes.md")
    }

    @Test func filtersTheFilesInsideAFolderAndReportsWhatWasLeftOut() async throws {
        try FileManager.default.createDirectory(atPath: host("Pics/Deep"), withIntermediateDirectories: true)
        try write(tinyPNG, to: "Pics/Deep/ok.png")
        directory.make(["host/Pics/readme.txt": "text", "host/Pics/liar.png": "text again"])
        let results = try await session.perform(ImportItems([host("Pics")], allowedTypes: ["public.png"]))
        let node = try results[0].outcome.get()
        #expect(node.path == (try path("/Import/Pics")))
        #expect(directory.exists(user("Import/Pics/Deep/ok.png")))
        #expect(!directory.exists(user("Import/Pics/readme.txt")))
        #expect(!directory.exists(user("Import/Pics/liar.png")))
        #expect(Set(results[0].skipped.map { ($0.hostPath as NSString).lastPathComponent }) == ["readme.txt", "liar.png"])
        #expect(results[0].skipped.allSatisfy { $0.error.kind == .typeNotAllowed })
    }

    @Test func aHostNameThatIsNotUTF8IsReportedNotGuessed() async throws {
        directory.make(["host/Mixed/fine.txt": "f"])
        // "caf\xE9.txt" in Latin-1, as an old archive might hold it.
        let raw: [UInt8] = Array(host("Mixed/").utf8) + [0x63, 0x61, 0x66, 0xE9, 0x2E, 0x74, 0x78, 0x74, 0]
        let fd = raw.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) }
        }
        #expect(fd >= 0)
        close(fd)
        let results = try await session.perform(ImportItems([host("Mixed")]))
        #expect(try results[0].outcome.get().name == "Mixed")
        #expect(results[0].skipped.map(\.error.kind) == [.invalidName])
        #expect(results[0].skipped.first?.error.userMessage(in: .english).text == "That name is not valid UTF-8.")
        #expect(directory.names(user("Import/Mixed")) == ["fine.txt"])
    }

    @Test func linksInHostFoldersAreFollowedOnlyToAllowedFiles() async throws {
        directory.make(["host/Shared/own.txt": "own", "outside/secret.txt": "secret", "host/target.txt": "target"])
        directory.link("host/Shared/to-outside.txt", to: directory.url("outside/secret.txt"))
        directory.link("host/Shared/to-inside.txt", to: "../target.txt")
        directory.link("host/Shared/loop", to: ".")
        let limited = try service.openSession(SessionOptions(frontEnd: "test", hostAccess: .only([directory.url("host")])))
        let results = try await limited.perform(ImportItems([host("Shared")]))
        #expect(try results[0].outcome.get().name == "Shared")
        // The link inside the allowed folder is imported as the content it points to.
        #expect(directory.contents(user("Import/Shared/to-inside.txt")) == "target")
        #expect(!directory.exists(user("Import/Shared/to-outside.txt")))
        #expect(!directory.exists(user("Import/Shared/loop")))
        let skipped = Dictionary(uniqueKeysWithValues: results[0].skipped.map { (($0.hostPath as NSString).lastPathComponent, $0.error.kind) })
        #expect(skipped == ["to-outside.txt": .hostAccessDenied, "loop": .unsupported])
        // Named directly, outside paths are denied too, however they are spelled.
        let denied = try await limited.perform(ImportItems([
            directory.url("outside/secret.txt"), host("../outside/secret.txt"), host("Shared/to-outside.txt"),
            directory.url("host-not/x"),
        ]))
        #expect(denied.allSatisfy { if case .failure(let e) = $0.outcome { e.kind == .hostAccessDenied || e.kind == .noSuchFile } else { false } })
        #expect(denied.prefix(3).allSatisfy { if case .failure(let e) = $0.outcome { e.kind == .hostAccessDenied } else { false } })
    }

    @Test func theContainerIsNeverAHostPath() async throws {
        directory.make([user("inside.txt"): "x"])
        let results = try await session.perform(ImportItems([directory.url(user("inside.txt")), directory.url("c")]))
        for result in results {
            guard case .failure(let error) = result.outcome else { Issue.record("imported from the container"); continue }
            #expect(error.kind == .hostAccessDenied)
        }
        await #expect(throws: CofferError.self) { _ = try await session.perform(ExportItem(try path("/inside.txt"), toHostFolder: directory.url("c/tmp"))) }
    }

    @Test func importingAFolderThatHoldsTheContainerLeavesTheContainerOut() async throws {
        directory.make([user("inside.txt"): "x", "notes.txt": "n"])
        let results = try await session.perform(ImportItems([directory.path]))
        let node = try results[0].outcome.get()
        #expect(results[0].skipped.map(\.error.kind).contains(.hostAccessDenied))
        #expect(results[0].skipped.contains { $0.hostPath.hasSuffix("/c") })
        #expect(directory.exists(user("Import/\(node.name)/notes.txt")))
        #expect(!directory.exists(user("Import/\(node.name)/c")))
    }

    @Test func theDefaultPolicyAllowsNothing() async throws {
        directory.make(["host/a.txt": "a"])
        let closed = try service.openSession(SessionOptions(frontEnd: "test"))
        let results = try await closed.perform(ImportItems([host("a.txt")]))
        if case .failure(let error) = results[0].outcome { #expect(error.kind == .hostAccessDenied) } else { Issue.record("imported") }
        #expect(await thrownError(of: try await closed.perform(OpenHostFile(host("a.txt"))))?.kind == .hostAccessDenied)
    }

    @Test func aCancelledImportLeavesNothing() async throws {
        let big = host("big.bin")
        try directory.makeSparseFile("host/big.bin", gigabytes: 3)
        // Cancelled in the middle of the copy, from the progress report of its first bytes: on a
        // loaded machine a test that slept and looked could wake only after the copy was done.
        let running = Mutex<Task<[ImportResult], any Error>?>(nil)
        let progress = ProgressReporter { current in
            if current.completedBytes > 0 { running.withLock { $0?.cancel() } }
        }
        let task = Task { try await session.perform(ImportItems([big]), progress: FixedProgress(progress)) }
        running.withLock { $0 = task }
        if progress.current.completedBytes > 0 { task.cancel() }  // bytes moved before the task was known
        let results = try await task.value
        if case .failure(let error) = results[0].outcome { #expect(error.kind == .cancelled) } else { Issue.record("finished") }
        #expect(directory.names(user("Import")).isEmpty)
    }

    // MARK: Export

    @Test func exportsACopyKeepingBothAndCleansTheStage() async throws {
        directory.make([user("Docs/report.txt"): "v2", "host/Out/report.txt": "v1", user("Docs/Folder/x.txt"): "x"])
        let written = try await session.perform(ExportItem(try path("/Docs/report.txt"), toHostFolder: host("Out")))
        #expect(written == (realpath(host("Out"), nil).map { String(cString: $0) } ?? "") + "/report (2).txt")
        #expect(directory.contents("host/Out/report.txt") == "v1")
        #expect(directory.contents("host/Out/report (2).txt") == "v2")
        // Never a move: the sandbox copy stays, and no stage is left.
        #expect(directory.contents(user("Docs/report.txt")) == "v2")
        #expect(directory.names("c/Documents/ExportTemp").isEmpty)
        _ = try await session.perform(ExportItem(try path("/Docs/Folder"), toHostFolder: host("Out")))
        #expect(directory.contents("host/Out/Folder/x.txt") == "x")
        await #expect(throws: CofferError.self) {
            _ = try await session.perform(ExportItem(try path("/Docs/report.txt"), toHostFolder: host("Out"), conflict: .fail))
        }
        _ = try await session.perform(ExportItem(try path("/Docs/report.txt"), toHostFolder: host("Out"), conflict: .replace))
        #expect(directory.contents("host/Out/report.txt") == "v2")
        #expect(directory.names("host/Out") == ["Folder", "report (2).txt", "report.txt"])
        #expect(directory.names("c/Documents/ExportTemp").isEmpty)
        // What it replaced is in the desktop trash, not deleted.
        #expect(directory.contents("home/.local/share/Trash/files/report.txt") == "v1")
        let info = directory.contents("home/.local/share/Trash/info/report.txt.trashinfo") ?? ""
        #expect(info.contains("Path=\(realpath(host("Out"), nil).map { String(cString: $0) } ?? "")/report.txt\n"))
    }

    @Test func exportReplacingNeverDeletesAndKeepsFoldersAndFilesApart() async throws {
        directory.make([user("Reports/new.txt"): "ours", user("photo.jpg"): "jpeg",
                        "host/Desktop/Reports/theirs.txt": "the user's own", "host/Desktop/photo.jpg/inside.txt": "kept"])
        // A folder replaces a folder: the user's own folder goes whole to the desktop trash.
        _ = try await session.perform(ExportItem(try path("/Reports"), toHostFolder: host("Desktop"), conflict: .replace))
        #expect(directory.names("host/Desktop/Reports") == ["new.txt"])
        #expect(directory.contents("home/.local/share/Trash/files/Reports/theirs.txt") == "the user's own")
        // A file never replaces a host folder unless asked.
        let refused = await thrownError(of: try await session.perform(
            ExportItem(try path("/photo.jpg"), toHostFolder: host("Desktop"), conflict: .replace)))
        #expect(refused?.detail == "folder-in-the-way")
        #expect(directory.contents("host/Desktop/photo.jpg/inside.txt") == "kept")
        #expect(directory.names("host/Desktop").allSatisfy { !$0.hasPrefix(".coffer-partial-") })
        _ = try await session.perform(ExportItem(try path("/photo.jpg"), toHostFolder: host("Desktop"), conflict: .replaceFolder))
        #expect(directory.contents("host/Desktop/photo.jpg") == "jpeg")
        #expect(directory.contents("home/.local/share/Trash/files/photo.jpg/inside.txt") == "kept")
        // The audit entries name what went to the desktop trash.
        let log = directory.contents("c/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        #expect(log.contains(#""trashed":["desktop:Reports"]"#))
        #expect(log.contains(#""trashed":["desktop:photo.jpg"]"#))
    }

    @Test func exportFailuresNameTheSandboxItemAndLeaveNothing() async throws {
        directory.make(["host/Out/": ""])
        let missing = await thrownError(of: try await session.perform(ExportItem(try path("/nope.txt"), toHostFolder: host("Out"))))
        #expect(missing?.kind == .noSuchFile)
        #expect(missing?.path == (try path("/nope.txt")))
        directory.make([user("a.txt"): "a"])
        let notFolder = await thrownError(of: try await session.perform(ExportItem(try path("/a.txt"), toHostFolder: host("nowhere"))))
        #expect(notFolder?.kind == .noSuchFile)
        #expect(directory.names("host/Out").isEmpty)
        #expect(directory.names("c/Documents/ExportTemp").isEmpty)
    }

    // MARK: Open in place

    @Test func bookmarksSurviveARestartAndFollowARename() async throws {
        directory.make(["host/Docs/draft.txt": "first draft"])
        let opened = try await session.perform(OpenHostFile(host("Docs/draft.txt")))
        #expect(opened.bookmark.id == 1)
        #expect(opened.type.byName == "public.plain-text")
        // Opening the same file again keeps its bookmark.
        #expect(try await session.perform(OpenHostFile(host("Docs/draft.txt"))).bookmark.id == 1)

        try FileManager.default.moveItem(atPath: host("Docs/draft.txt"), toPath: host("Docs/final.txt"))
        let restarted = try FileService.standard(container: try await Container.open(at: directory.url("c")))
            .openSession(SessionOptions(frontEnd: "test", hostAccess: .anywhere))
        let statuses = try await restarted.perform(ListBookmarks())
        #expect(statuses.count == 1)
        #expect(statuses[0].problem == nil)
        #expect(statuses[0].bookmark.hostPath.hasSuffix("/Docs/final.txt"))
        let text = try await restarted.withAccess(to: 1) { access in
            String(decoding: try await access.read(offset: 6, length: 5), as: UTF8.self)
        }
        #expect(text == "draft")
        // The new path was saved.
        let saved = try #require(directory.contents("c/Library/Application Support/AppData/bookmarks.json"))
        #expect(saved.contains("final.txt"))
    }

    @Test func aDeletedOrReplacedFileMakesTheBookmarkStale() async throws {
        directory.make(["host/a.txt": "a", "host/b.txt": "b"])
        let a = try await session.perform(OpenHostFile(host("a.txt"))).bookmark.id
        let b = try await session.perform(OpenHostFile(host("b.txt"))).bookmark.id
        try FileManager.default.removeItem(atPath: host("a.txt"))
        // Replaced the way editors save: a new file renamed over the old one.
        directory.make(["host/b.new": "b2"])
        #expect(rename(host("b.new"), host("b.txt")) == 0)
        let statuses = try await session.perform(ListBookmarks())
        #expect(statuses.map(\.isStale) == [true, true])
        for id in [a, b] {
            #expect(await thrownError(of: try await session.withAccess(to: id) { _ in 0 })?.kind == .staleBookmark)
        }
        #expect(await thrownError(of: try await session.withAccess(to: 99) { _ in 0 })?.kind == .noSuchFile)
    }

    @Test func bookmarksMadeAtOnceByTwoServicesAreAllKept() async throws {
        for index in 0..<24 { directory.make(["host/f\(index).txt": "\(index)"]) }
        let other = try FileService.standard(container: container)
            .openSession(SessionOptions(frontEnd: "test", hostAccess: .anywhere))
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<24 {
                let chosen = index % 2 == 0 ? session : other
                let path = host("f\(index).txt")
                group.addTask { _ = try? await chosen.perform(OpenHostFile(path)) }
            }
        }
        let bookmarks = try await session.perform(ListBookmarks()).map(\.bookmark)
        #expect(bookmarks.count == 24)
        #expect(Set(bookmarks.map(\.id)).count == 24)
    }

    @Test func accessEndsWhenTheBodyReturns() async throws {
        directory.make(["host/a.txt": "abc"])
        let id = try await session.perform(OpenHostFile(host("a.txt"))).bookmark.id
        let escaped = try await session.withAccess(to: id) { $0 }
        await #expect(throws: CofferError.self) { _ = try await escaped.read(offset: 0, length: 1) }
    }

    // MARK: Types and text

    @Test func infoSeesTheTypeByContentAndFlagsAMismatch() async throws {
        directory.make([user("fake.png"): "plain words\n", user("notes.md"): "# Title\n"])
        let fake = try await service.assessType(try path("/fake.png"))
        #expect(fake.byName == "public.png")
        #expect(fake.byContent == "public.plain-text")
        #expect(fake.isMismatch)
        let notes = try await service.assessType(try path("/notes.md"))
        #expect(!notes.isMismatch)
        #expect(notes.effective == "net.daringfireball.markdown")
    }

    @Test(arguments: [
        ("utf8.txt", Array("年度报告 annual\n".utf8), TextCharset.utf8),
        ("bom16.txt", [0xFF, 0xFE] + Array("年度报告".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, .utf16LittleEndian),
        ("gb.txt", [0xC4, 0xEA, 0xB6, 0xC8, 0xB1, 0xA8, 0xB8, 0xE6], .gb18030),
    ])
    func readsTextInItsEncoding(name: String, bytes: [UInt8], charset: TextCharset) async throws {
        try Data(bytes).write(to: URL(fileURLWithPath: directory.url(user(name))))
        let reader = try await service.openText(try path("/" + name))
        #expect(reader.charset == charset)
        var text = ""
        while let piece = try await reader.next() { text += piece }
        #expect(text.hasPrefix("年度报告"))
    }

    @Test func binaryIsNotText() async throws {
        try Data(tinyPNG).write(to: URL(fileURLWithPath: directory.url(user("p.png"))))
        let failure = await thrownError(of: try await service.openText(try path("/p.png")))
        #expect(failure?.kind == .unsupported)
        #expect(failure?.detail == "not-text")
    }
}

/// Shows an operation's progress in `reporter`, for tests that watch it.
struct FixedProgress: ProgressDisplay {
    let reporter: ProgressReporter
    init(_ reporter: ProgressReporter) { self.reporter = reporter }
    func begin() -> ProgressReporter { reporter }
    func end() {}
}

/// The `CofferError` an expression throws, or `nil`.
func thrownError<T>(of body: @autoclosure () async throws -> T) async -> CofferError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? CofferError
    }
}
