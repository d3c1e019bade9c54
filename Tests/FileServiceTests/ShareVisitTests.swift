import CofferCore
import CofferTestSupport
@testable import FileService
import Foundation
import Synchronization
import Testing

/// A share link's visitor is a session of its own (front end `share`): the link looked up,
/// its password tried, a download ended, a drop box's uploads — each an operation, audited
/// once by the session with the visitor's address and the share (issue 49).
struct ShareVisitTests {
    let directory = TemporaryDirectory("share-visit")
    let service: FileService

    init() async throws {
        directory.make(["c/Documents/UserFiles/Docs/report.txt": "report", "c/Documents/UserFiles/Inbox/taken.txt": "here"])
        service = try FileService.standard(container: try await Container.open(at: directory.url("c")))
    }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }

    /// The audit log's entries so far.
    var audited: [[String: String]] {
        (directory.contents("c/Library/Application Support/AppData/logs/audit.jsonl") ?? "").split(separator: "\n").compactMap { line in
            guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return entry.compactMapValues { value in
                (value as? String) ?? (value as? [String]).map { $0.joined(separator: " | ") }
            }.filter { $0.key != "time" }
        }
    }

    /// Makes a share from the owner's session; returns its ID.
    func share(_ text: String, password: String? = nil, downloads: Int? = nil, upload: Bool = false) async throws -> String {
        let owner = try service.openSession(SessionOptions(frontEnd: "repl"))
        defer { Task { await owner.close() } }
        return try await owner.perform(CreateShare(try path(text), password: password, downloadLimit: downloads, upload: upload)).id
    }

    func visitor(_ id: String, from client: String = "192.0.2.7") throws -> Session {
        try service.openSession(SessionOptions(frontEnd: "share", client: client, share: id))
    }

    @Test func aVisitorLooksUpFindsAndDownloadsInASessionAuditedOnce() async throws {
        let id = try await share("/Docs", downloads: 1)
        let visitor = try visitor(id)
        let found = try await visitor.perform(OpenShare(id))
        #expect(found.path == "files:/Docs" && found.state() == .active)
        let item = try await visitor.perform(FindSharedItem(found, names: ["report.txt"]))
        #expect(item.path == (try path("/Docs/report.txt")))
        // No way out of what was shared, and no share behind a wrong ID.
        #expect(await thrownError(of: try await visitor.perform(FindSharedItem(found, names: [".."]))) != nil)
        let wrongID = (id.first == "A" ? "B" : "A") + String(id.dropFirst())
        #expect(await thrownError(of: try await visitor.perform(OpenShare(wrongID)))?.kind == .noSuchFile)
        // A range short of the end does not count; the whole file does, and ends the share.
        _ = try await visitor.perform(EndSharedDownload(found, item: item.path, .partial(bytes: 3)))
        #expect(try await visitor.perform(OpenShare(id)).state() == .active)
        let counted = try await visitor.perform(EndSharedDownload(found, item: item.path, .complete(bytes: 6)))
        #expect(counted?.downloads == 1 && counted?.state() == .exhausted)
        _ = try await visitor.perform(EndSharedZip(found, folder: found.virtualPath!, .refused(status: 410)))
        await visitor.close()
        // Lookups and finds are reads: only the downloads are in the log, each once, as the visitor's.
        let visits = audited.filter { $0["frontEnd"] == "share" }
        #expect(visits == [
            ["frontEnd": "share", "method": "share-download", "outcome": "ok", "paths": "files:/Docs/report.txt",
             "client": "192.0.2.7", "share": id, "bytes": "3"],
            ["frontEnd": "share", "method": "share-download", "outcome": "ok", "paths": "files:/Docs/report.txt",
             "client": "192.0.2.7", "share": id, "bytes": "6"],
            ["frontEnd": "share", "method": "share-zip", "outcome": "410", "paths": "files:/Docs",
             "client": "192.0.2.7", "share": id, "bytes": "0"],
        ])
    }

    @Test func wrongPasswordsMakeAClientWaitLongerEachTimeAndAreAudited() async throws {
        let id = try await share("/Docs/report.txt", password: "open sesame")
        let visitor = try visitor(id)
        let found = try await visitor.perform(OpenShare(id))
        for _ in 0..<5 { #expect(try await visitor.perform(UnlockShare(found, password: "guess")) == .wrongPassword) }
        // Past five, this client waits — even with the right password — and another does not.
        #expect(try await visitor.perform(UnlockShare(found, password: "open sesame")) == .wait(seconds: 60))
        let other = try self.visitor(id, from: "198.51.100.1")
        #expect(try await other.perform(UnlockShare(found, password: "open sesame")) == .unlocked)
        await visitor.close()
        await other.close()
        let tries = audited.filter { $0["method"] == "share-password" }
        #expect(tries.map { $0["outcome"] } == Array(repeating: "wrongPassword", count: 5) + ["rateLimited", "ok"])
        #expect(tries.map { $0["client"] } == Array(repeating: "192.0.2.7", count: 6) + ["198.51.100.1"])
        #expect(tries.allSatisfy { $0["share"] == id && $0["paths"] == "files:/Docs/report.txt" })
    }

    @Test func theAttemptsDoubleTheWaitUpToAnHour() {
        let attempts = ShareAttempts()
        let now = Date()
        for _ in 0..<4 { attempts.failed("s c", now: now) }
        #expect(attempts.wait(for: "s c", now: now) == nil)
        attempts.failed("s c", now: now)
        #expect(attempts.wait(for: "s c", now: now) == 60)
        #expect(attempts.wait(for: "s other", now: now) == nil, "another client is not held back")
        attempts.failed("s c", now: now)
        #expect(attempts.wait(for: "s c", now: now) == 120)
        for _ in 0..<20 { attempts.failed("s c", now: now) }
        #expect(attempts.wait(for: "s c", now: now) == 3600)
        attempts.succeeded("s c")
        #expect(attempts.wait(for: "s c", now: now) == nil)
    }

    @Test func aDropBoxKeepsBothByItsFrontEndsDefaultAndAuditsEachFileOnce() async throws {
        let id = try await share("/Inbox", upload: true)
        let visitor = try visitor(id)
        #expect(visitor.defaults.conflicts["beginUpload"] == .policy(.keepBoth))
        let upload = try await visitor.perform(BeginUpload(try path("/Inbox/taken.txt")))
        _ = try await visitor.perform(AppendUpload(upload, offset: 0, bytes: Array("mine".utf8)))
        let landed = try await visitor.perform(CommitUpload(upload))
        #expect(landed.name == "taken (2).txt")
        #expect(directory.contents("c/Documents/UserFiles/Inbox/taken.txt") == "here")
        await visitor.close()
        #expect(audited.filter { $0["frontEnd"] == "share" } == [
            ["frontEnd": "share", "method": "upload", "outcome": "ok", "paths": "files:/Inbox/taken (2).txt",
             "client": "192.0.2.7", "share": id],
        ])
    }

    /// A request body appended as it arrives, in pieces of any size, by one operation that
    /// audits where it began and what it brought (tus's `PATCH`).
    @Test func aStreamedBodyIsAppendedWholeAndAuditedWithItsOffset() async throws {
        let session = try service.openSession(SessionOptions(frontEnd: "web"))
        let content = (0..<(3 << 20) + 5).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let upload = try await session.perform(BeginUpload(try path("/Docs/big.bin"), size: Int64(content.count)))
        _ = try await session.perform(AppendUpload(upload, offset: 0, bytes: Array(content[..<10])))
        let received = try await session.perform(AppendUploadStream(upload, offset: 10, body: Dribble(Array(content[10...])),
                                                                     destination: try path("/Docs/big.bin")))
        #expect(received == Int64(content.count))
        _ = try await session.perform(CommitUpload(upload))
        #expect(FileManager.default.contents(atPath: directory.url("c/Documents/UserFiles/Docs/big.bin")).map(Array.init) == content)
        await session.close()
        let streamed = audited.filter { $0["method"] == "appendUploadStream" }
        #expect(streamed == [["frontEnd": "web", "method": "appendUploadStream", "outcome": "ok", "paths": "files:/Docs/big.bin",
                              "upload": upload, "offset": "10", "bytes": String(content.count - 10)]])
    }
}

/// A body that arrives a few bytes at a time, in uneven pieces.
private final class Dribble: IncomingBytes {
    private let bytes: [UInt8]
    private let position = Mutex(0)

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        position.withLock { position in
            let count = min(buffer.count, bytes.count - position, 1 + position % 70_001)
            for index in 0..<count { buffer[index] = bytes[position + index] }
            position += count
            return count
        }
    }
}
