import CofferCore
import CofferRuntime
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Testing

/// Chunked uploads in the service: invisible until committed, conflicts at commit, expiry,
/// and each upload its session's own.
struct UploadTests {
    let fixture: ServiceFixture
    var directory: TemporaryDirectory { fixture.directory }
    var service: FileService { fixture.service }
    var session: Session { fixture.session }

    init() async throws { fixture = try await ServiceFixture("uploads") }

    var partials: [String] { directory.names("c/Library/Caches/Downloading").filter { $0 != "CACHEDIR.TAG" } }

    @Test func idleUploadsExpireAndBusyOnesDoNot() async throws {
        let id = try await session.perform(BeginUpload(try VirtualPath(parsing: "/a.bin")))
        _ = try await session.perform(AppendUpload(id, offset: 0, bytes: [1, 2, 3]))
        #expect(partials.count == 1)
        #expect(await service.abortUploads(idleFor: 3600) == 0)
        #expect(await service.abortUploads(idleFor: 0) == 1)
        #expect(partials.isEmpty)
        await #expect(throws: CofferError.self) { try await session.perform(AppendUpload(id, offset: 3, bytes: [4])) }
    }

    @Test func commitSettlesConflictsAsChosenAtBegin() async throws {
        directory.make(["c/Documents/UserFiles/a.txt": "old"])
        await #expect(throws: CofferError.self) { _ = try await session.perform(BeginUpload(try VirtualPath(parsing: "/a.txt"))) }
        let keep = try await session.perform(BeginUpload(try VirtualPath(parsing: "/a.txt"), conflict: .keepBoth))
        _ = try await session.perform(AppendUpload(keep, offset: 0, bytes: Array("new".utf8)))
        #expect(try await session.perform(CommitUpload(keep)).name == "a (2).txt")
        #expect(directory.contents("c/Documents/UserFiles/a.txt") == "old")
        #expect(directory.contents("c/Documents/UserFiles/a (2).txt") == "new")
        #expect(partials.isEmpty)
        // Fewer bytes than announced: refused, and nothing placed.
        let short = try await session.perform(BeginUpload(try VirtualPath(parsing: "/b.txt"), size: 10))
        _ = try await session.perform(AppendUpload(short, offset: 0, bytes: [1]))
        await #expect(throws: CofferError.self) { _ = try await session.perform(CommitUpload(short)) }
        #expect(!directory.exists("c/Documents/UserFiles/b.txt"))
        #expect(partials.isEmpty)
    }

    /// A session may hold 32 uploads open (each holds a descriptor); the 33rd is refused with
    /// words that say why, nothing is left of it, and other sessions are not affected.
    @Test func aSessionHoldsAtMost32UploadsOpen() async throws {
        var ids: [String] = []
        for index in 0..<32 { ids.append(try await session.perform(BeginUpload(try VirtualPath(parsing: "/u\(index).bin")))) }
        let refused = await thrownError(of: try await session.perform(BeginUpload(try VirtualPath(parsing: "/u32.bin"))))
        #expect(refused?.kind == .tooLarge && refused?.detail == "too-many-uploads")
        #expect(refused?.userMessage(in: .english).text.contains("32 uploads open") == true)
        #expect(partials.count == 32)
        let other = try service.openSession(SessionOptions(frontEnd: "test"))
        _ = try await other.perform(BeginUpload(try VirtualPath(parsing: "/theirs.bin")))
        _ = try await session.perform(AbortUpload(ids[0]))
        _ = try await session.perform(BeginUpload(try VirtualPath(parsing: "/u32.bin")))
        await other.close()
    }

    /// An open upload holds no descriptor while it waits for its next chunk (issue 32: 499 open
    /// uploads took every descriptor of the process).
    @Test func anOpenUploadHoldsNoDescriptorBetweenChunks() async throws {
        // The descriptors of this process open on files of this test's uploads area.
        let area = URL(fileURLWithPath: directory.url("c/Library/Caches/Downloading")).standardizedFileURL.path
        func descriptors() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"))?.hasPrefix(area + "/") == true
            }
        }
        var ids: [String] = []
        for index in 0..<30 {
            let id = try await session.perform(BeginUpload(try VirtualPath(parsing: "/open\(index).bin")))
            _ = try await session.perform(AppendUpload(id, offset: 0, bytes: [UInt8](repeating: 7, count: 1 << 20)))
            ids.append(id)
        }
        #expect(descriptors() == 0, "\(descriptors()) descriptors held by 30 open uploads")
        for id in ids { _ = try await session.perform(AbortUpload(id)) }
        #expect(partials.isEmpty)
    }

    @Test func anUploadBelongsToItsSessionAndEndsWithIt() async throws {
        let other = try service.openSession(SessionOptions(frontEnd: "test"))
        let id = try await session.perform(BeginUpload(try VirtualPath(parsing: "/mine.bin")))
        _ = try await session.perform(AppendUpload(id, offset: 0, bytes: [1, 2]))
        // Another session does not know it: it can neither add to it, nor commit or abort it.
        #expect(await thrownError(of: try await other.perform(AppendUpload(id, offset: 2, bytes: [3])))?.kind == .notFoundUpload)
        #expect(await thrownError(of: try await other.perform(CommitUpload(id)))?.kind == .notFoundUpload)
        #expect(await thrownError(of: try await other.perform(AbortUpload(id)))?.kind == .notFoundUpload)
        let theirs = try await other.perform(BeginUpload(try VirtualPath(parsing: "/theirs.bin")))
        #expect(partials.count == 2)
        // Closing a session discards what it left open, and only that.
        await session.close()
        #expect(partials.count == 1)
        _ = try await other.perform(AppendUpload(theirs, offset: 0, bytes: [9]))
        #expect(try await other.perform(CommitUpload(theirs)).size == 1)
        await other.close()
        #expect(partials.isEmpty)
        #expect(!directory.exists("c/Documents/UserFiles/mine.bin"))
    }

    /// A resumable upload (tus's) outlives its session and its process: its id is the
    /// capability to go on with it, so any session handed the id — of any front end, and after
    /// a restart of a later service on the same container — goes on from the bytes received;
    /// an id one letter off finds nothing. After a reboot (another boot id) it is dropped with
    /// its data.
    @Test func aResumableUploadGoesOnWithWhoeverHoldsItsIDAfterARestartToo() async throws {
        let web = try service.openSession(SessionOptions(frontEnd: "web"))
        let id = try await web.perform(BeginUpload(try VirtualPath(parsing: "/resumed.bin"), size: 5, resumable: true))
        _ = try await web.perform(AppendUpload(id, offset: 0, bytes: [1, 2, 3]))
        await web.close()
        #expect(partials.count == 2, "the data and its record stay when the session ends: \(partials)")
        // A session handed the id goes on with it (the page's socket begins, /tus/ sends).
        let sibling = try service.openSession(SessionOptions(frontEnd: "web"))
        #expect(try await sibling.perform(ReadUploadStatus(id)).received == 3)
        #expect(try await session.perform(ReadUploadStatus(id)).received == 3)
        let wrong = String(id.dropLast()) + (id.last == "0" ? "1" : "0")
        #expect(await thrownError(of: try await sibling.perform(ReadUploadStatus(wrong)))?.kind == .notFoundUpload)
        await sibling.close()

        let again = try FileService.standard(container: try await Container.open(at: directory.url("c")))
        let other = try again.openSession(SessionOptions(frontEnd: "rpc"))
        #expect(await thrownError(of: try await other.perform(ReadUploadStatus(wrong)))?.kind == .notFoundUpload)
        let later = try again.openSession(SessionOptions(frontEnd: "mcp"))
        #expect(try await later.perform(ReadUploadStatus(id)).received == 3)
        _ = try await later.perform(AppendUpload(id, offset: 3, bytes: [4, 5]))
        #expect(try await later.perform(CommitUpload(id)).size == 5)
        #expect(directory.contents("c/Documents/UserFiles/resumed.bin") == "\u{1}\u{2}\u{3}\u{4}\u{5}")
        #expect(partials.isEmpty)

        // Begun before the machine restarted: dropped, data and record.
        let before = try await later.perform(BeginUpload(try VirtualPath(parsing: "/rebooted.bin"), resumable: true))
        _ = try await later.perform(AppendUpload(before, offset: 0, bytes: [1]))
        await later.close()
        let record = directory.url("c/Library/Caches/Downloading/resume-\(before).json")
        let text = try String(contentsOfFile: record, encoding: .utf8)
        try text.replacingOccurrences(of: BootIdentity.current ?? "", with: "another-boot").write(toFile: record, atomically: true, encoding: .utf8)
        let third = try FileService.standard(container: try await Container.open(at: directory.url("c")))
        let rebooted = try third.openSession(SessionOptions(frontEnd: "web"))
        #expect(await thrownError(of: try await rebooted.perform(ReadUploadStatus(before)))?.kind == .notFoundUpload)
        #expect(partials.isEmpty, "\(partials)")
        await rebooted.close()
        await other.close()
    }

    /// A record whose data is gone is removed at the next start.
    @Test func aResumableUploadsRecordGoesWithItsData() async throws {
        let web = try service.openSession(SessionOptions(frontEnd: "web"))
        let id = try await web.perform(BeginUpload(try VirtualPath(parsing: "/gone.bin"), resumable: true))
        await web.close()
        for name in partials where name.hasPrefix("upload-") {
            try FileManager.default.removeItem(atPath: directory.url("c/Library/Caches/Downloading/\(name)"))
        }
        #expect(partials == ["resume-\(id).json"])
        _ = try await Container.open(at: directory.url("c"))
        #expect(partials.isEmpty)
    }

    @Test func anUploadLeftByACrashIsRemovedAtTheNextStart() async throws {
        directory.make(["c/Library/Caches/Downloading/.coffer-partial-0badcafe-1": "x"])
        let old = Date().addingTimeInterval(-2 * 3600)
        try FileManager.default.setAttributes([.modificationDate: old],
                                              ofItemAtPath: directory.url("c/Library/Caches/Downloading/.coffer-partial-0badcafe-1"))
        _ = try await Container.open(at: directory.url("c"))
        #expect(partials.isEmpty)
    }
}

/// The audit log's lines and its rotation by size.
struct AuditLogTests {
    let directory = TemporaryDirectory("audit")

    @Test func linesAreJSONAndTheFileRotatesBySize() throws {
        let log = AuditLog(path: directory.url("logs/audit.jsonl"), maxBytes: 300, keep: 2)
        for index in 0..<12 {
            log.record(frontEnd: "rpc", method: "files/write", paths: ["files:/报告 \(index).txt"], outcome: "ok",
                       at: Date(timeIntervalSince1970: 1_795_000_000.25))
        }
        #expect(directory.names("logs") == ["audit.1.jsonl", "audit.2.jsonl", "audit.jsonl"])
        let current = try #require(directory.contents("logs/audit.jsonl"))
        let lines = current.split(separator: "\n")
        #expect(!lines.isEmpty && current.utf8.count < 300 + 120)
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any])
        #expect(entry["paths"] as? [String] == ["files:/报告 11.txt"])
        #expect(entry["time"] as? String == "2026-11-18T11:06:40.250Z")
        #expect(entry["frontEnd"] as? String == "rpc")
        // Older files hold older lines; nothing beyond `keep` is kept.
        #expect(directory.contents("logs/audit.2.jsonl")?.contains("报告 0.txt") == false)
    }
}
