import CofferBackends
import CofferCore
import CofferInMemory
import CofferTestSupport
import FileService
import Foundation
import Testing

/// `user.` attributes travel with copies between any two backends, and what the target
/// cannot keep is reported to the operation's front end (``OperationWarnings``), never
/// dropped in silence (issue 35).
struct AttributeTravelTests {
    let directory = TemporaryDirectory("attribute-travel")
    let service: FileService
    let session: Session

    init() throws {
        directory.make(["files/Docs/report.txt": "r", "files/Docs/Inner/plan.md": "p", "other/.keep": ""])
        let local = try LocalSandboxBackend(rootPath: directory.url("files"))
        let other = try LocalSandboxBackend(rootPath: directory.url("other"))
        service = FileService(mounts: [Mount(name: "files", backend: local), Mount(name: "other", backend: other),
                                       Mount(name: "memory", backend: InMemoryBackend())])
        session = try service.openSession(SessionOptions(frontEnd: "test"))
        for (path, name, value) in [("files/Docs/report.txt", FileTags.attribute, "work"),
                                    ("files/Docs/report.txt", "user.xdg.comment", "keep me"),
                                    ("files/Docs", FileTags.attribute, "folder")] {
            #expect(Self.run(["setfattr", "-n", name, "-v", value, directory.url(path)]) != nil)
        }
    }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }

    /// What `getfattr` (`attr`, another program's reading) finds.
    func attribute(_ name: String, of relative: String) -> String? {
        Self.run(["getfattr", "--only-values", "-n", name, directory.url(relative)])
    }

    /// The output of a program on `PATH`, `nil` when it fails.
    static func run(_ arguments: [String]) -> String? {
        guard let result = try? TestProcess.run(arguments, timeout: 60), result.status == 0 else { return nil }
        return result.outputText
    }

    @Test func aCopyBetweenLocalMountsKeepsEveryAttributeAndWarnsOfNothing() async throws {
        let reported = await session.performReporting(CopyItem(try path("files:/Docs"), to: .exactly(try path("other:/Docs"))))
        let warnings = reported.warnings
        #expect((try? reported.value.get()) != nil)
        #expect(warnings.isEmpty)
        #expect(attribute(FileTags.attribute, of: "other/Docs") == "folder")
        #expect(attribute(FileTags.attribute, of: "other/Docs/report.txt") == "work")
        #expect(attribute("user.xdg.comment", of: "other/Docs/report.txt") == "keep me")
    }

    @Test func aTargetWithoutAttributesIsReportedItemByItem() async throws {
        // They come back with the operation's outcome, as every front end asks for them.
        let reported = await session.performReporting(CopyItem(try path("files:/Docs"), to: .exactly(try path("memory:/Docs"))))
        let warnings = reported.warnings
        #expect((try? reported.value.get()) != nil, "the copy itself is made")
        #expect(warnings.map(\.path).sorted() == ["files:/Docs", "files:/Docs/report.txt"])
        let file = try #require(warnings.first { $0.path == "files:/Docs/report.txt" })
        #expect(file.attributes == ["user.xdg.comment", FileTags.attribute] && file.reason == .unsupported)
        #expect(file.message(.english) == "“files:/Docs/report.txt”: the copy did not keep user.xdg.comment, user.xdg.tags: "
                + "the destination keeps no extended attributes")
        #expect(file.message(.simplifiedChinese).contains("副本未保留"))

        // Nothing leaks into the next operation.
        let none = await session.performReporting(CopyItem(try path("files:/Docs/Inner"), to: .exactly(try path("memory:/Inner"))))
        #expect(none.warnings.isEmpty)
    }
}

/// ``ReadAttributes`` and ``ChangeAttributes``: what WebDAV keeps its dead properties in, read
/// and changed through a session like any other change, and visible to other programs.
struct AttributeChangeTests {
    let directory = TemporaryDirectory("attribute-change")
    let session: Session

    init() throws {
        directory.make(["files/note.txt": "n"])
        let local = try LocalSandboxBackend(rootPath: directory.url("files"))
        let service = FileService(mounts: [Mount(name: "files", backend: local), Mount(name: "memory", backend: InMemoryBackend())])
        session = try service.openSession(SessionOptions(frontEnd: "test"))
    }

    @Test func setReadAndRemove() async throws {
        let note = try VirtualPath(parsing: "files:/note.txt")
        let lost = try await session.perform(ChangeAttributes(note, setting: ["user.dav.a": Array("甲".utf8), "user.dav.b": [1, 2]]))
        #expect(lost.isEmpty)
        #expect(AttributeTravelTests.run(["getfattr", "--only-values", "-n", "user.dav.a", directory.url("files/note.txt")]) == "甲")
        #expect(try await session.perform(ReadAttributes(note))["user.dav.b"] == [1, 2])
        // Removing one the item lacks is passed over.
        _ = try await session.perform(ChangeAttributes(note, removing: ["user.dav.a", "user.dav.never"]))
        let left = try await session.perform(ReadAttributes(note))
        #expect(left["user.dav.a"] == nil && left["user.dav.b"] == [1, 2])
    }

    @Test func allOrNoneWhenOneCannotBeKept() async throws {
        let note = try VirtualPath(parsing: "files:/note.txt")
        _ = try await session.perform(ChangeAttributes(note, setting: ["user.dav.a": Array("old".utf8), "user.dav.b": [2]]))
        // Larger than any Linux file system keeps in one attribute (64 KiB).
        let huge = [UInt8](repeating: 7, count: 70_000)
        let lost = try await session.perform(ChangeAttributes(note, setting: ["user.dav.a": Array("new".utf8), "user.dav.huge": huge,
                                                                              "user.dav.c": [3]], removing: ["user.dav.b"]))
        #expect(lost.map(\.name) == ["user.dav.huge"])
        let after = try await session.perform(ReadAttributes(note))
        #expect(after == ["user.dav.a": Array("old".utf8), "user.dav.b": [2]], "nothing changed: \(after)")
    }

    @Test func namesOutsideUserAndTheTagsAreRefused() async throws {
        let note = try VirtualPath(parsing: "files:/note.txt")
        for name in ["trusted.x", "user.", FileTags.attribute, "user." + String(repeating: "x", count: 251)] {
            await #expect(throws: CofferError.self) { _ = try await session.perform(ChangeAttributes(note, setting: [name: [1]])) }
        }
        await #expect(throws: CofferError.self) { _ = try await session.perform(ReadAttributes(try VirtualPath(parsing: "files:/gone"))) }
        // A mount that keeps no attributes says so, and reads as none.
        _ = try await session.perform(WriteFile(try VirtualPath(parsing: "memory:/m.txt"), bytes: [1]))
        let memory = try VirtualPath(parsing: "memory:/m.txt")
        #expect(try await session.perform(ReadAttributes(memory)).isEmpty)
        do {
            _ = try await session.perform(ChangeAttributes(memory, setting: ["user.a": [1]]))
            Issue.record("a mount without attributes took one")
        } catch { #expect(error.kind == .unsupported) }
    }
}

/// ``TouchItem`` with a date: the time a sync client gives a file (WebDAV's `X-OC-Mtime`).
struct TouchToDateTests {
    @Test func anItemTakesTheTimeGivenAndAStoreThatCannotSaysSo() async throws {
        let directory = TemporaryDirectory("touch-date")
        directory.make(["files/a.txt": "a"])
        let service = FileService(mounts: [Mount(name: "files", backend: try LocalSandboxBackend(rootPath: directory.url("files"))),
                                           Mount(name: "memory", backend: InMemoryBackend())])
        let session = try service.openSession(SessionOptions(frontEnd: "test"))
        let when = Date(timeIntervalSince1970: 1_600_000_000.25)
        let node = try await session.perform(TouchItem(try VirtualPath(parsing: "files:/a.txt"), to: when))
        #expect(abs(node.modificationDate.timeIntervalSince(when)) < 0.001)
        let onDisk = try FileManager.default.attributesOfItem(atPath: directory.url("files/a.txt"))[.modificationDate] as? Date
        #expect(onDisk.map { abs($0.timeIntervalSince(when)) < 0.001 } == true)
        // Nothing is made to be given a time.
        await #expect(throws: CofferError.self) { _ = try await session.perform(TouchItem(try VirtualPath(parsing: "files:/new.txt"), to: when)) }
        #expect(!FileManager.default.fileExists(atPath: directory.url("files/new.txt")))
        _ = try await session.perform(WriteFile(try VirtualPath(parsing: "memory:/m.txt"), bytes: [1]))
        await #expect(throws: CofferError.self) { _ = try await session.perform(TouchItem(try VirtualPath(parsing: "memory:/m.txt"), to: when)) }
    }
}
