import CofferHTTP
@testable import CofferS3
import CofferCore
import Foundation
import Synchronization
import Testing

/// Big files on the test server: uploads in parts, what is left when one fails or is
/// cancelled (nothing), the clean-up after a killed process, and copies in parts. Parts are
/// made small (S3's least, 5 MiB) so that a few tens of MiB exercise every path.
@Suite(.s3Server)
struct S3TransferTests {
    static var smallParts: S3Transfers {
        var transfers = S3Transfers()
        transfers.multipartThreshold = 5 << 20
        transfers.partSize = 5 << 20
        transfers.parallelParts = 3
        transfers.copyPartLimit = 6 << 20
        return transfers
    }

    let root = VirtualPath.root(of: "s3")

    /// A backend on a new bucket, with its spool and ledger folders in a new scratch folder.
    func backend() throws -> (S3Backend, scratch: String) {
        let client = try S3ClientTests.client()
        try client.createBucket()
        let scratch = NSTemporaryDirectory() + "coffer-s3-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch + "/spool", withIntermediateDirectories: true)
        return (S3Backend(client: client, spoolFolder: scratch + "/spool", ledgerFolder: scratch + "/ledger",
                          transfers: Self.smallParts), scratch)
    }

    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) ^ seed }
    }

    @Test func aLargeWriteGoesInPartsAndReadsBackIdentical() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let (backend, _) = try backend()
        let data = Self.bytes(23 << 20 + 12_345, seed: 7)  // five parts, the last one short
        let path = root.appending(trustedName: "big 大.bin")
        let write = try await backend.makeWrite(at: path)
        for start in stride(from: 0, to: data.count, by: 1 << 20) {
            try await write.write(Array(data[start..<min(data.count, start + (1 << 20))]))
        }
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        try await write.setAttributes(permissions: nil, modificationDate: date)
        backend.client.sent.withLock { $0.removeAll() }
        try await write.commit(conflict: .fail)
        // HEAD, HEAD-less folder check (GET), start (POST), 5 parts (PUT), complete (POST).
        #expect(backend.client.sent.withLock { $0["PUT"] } == 5)
        let node = try await backend.node(at: path)
        #expect(node.size == Int64(data.count))
        #expect(node.modificationDate == date, "\(node.modificationDate.timeIntervalSince1970)")
        let file = try await backend.openFile(at: path)
        var back: [UInt8] = []
        while true {
            let piece = try await file.read(upTo: 4 << 20)
            if piece.isEmpty { break }
            back += piece
        }
        #expect(back == data)
        #expect(try backend.client.uploads(under: "").isEmpty)
        // A second create of the name fails (looked at before the parts and before finishing).
        let again = try await backend.makeWrite(at: path)
        try await again.write(Self.bytes(6 << 20, seed: 1))
        let refused = await #expect(throws: CofferError.self) { try await again.commit(conflict: .fail) }
        #expect(refused?.kind == .fileExists)
        #expect(try backend.client.uploads(under: "").isEmpty)
    }

    /// A write announced big and dated (a copy's) sends its parts while it is written; the
    /// object appears only at commit. A different date set at the end is still kept (the
    /// upload is made again), and an aborted write leaves no upload behind.
    @Test func anAnnouncedWriteSendsItsPartsWhileItIsWritten() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let (backend, _) = try backend()
        let data = Self.bytes(17 << 20, seed: 2)
        let date = Date(timeIntervalSince1970: 1_690_000_000.5)
        let path = root.appending(trustedName: "copied.bin")
        func write(_ date: Date, then finalDate: Date?) async throws -> any PendingWrite {
            let write = try await backend.makeWrite(at: path, announcing: ExpectedWrite(size: Int64(data.count), modificationDate: date))
            for start in stride(from: 0, to: data.count, by: 1 << 20) {
                try await write.write(Array(data[start..<min(data.count, start + (1 << 20))]))
            }
            try await write.setAttributes(permissions: nil, modificationDate: finalDate)
            return write
        }
        backend.client.sent.withLock { $0.removeAll() }
        let first = try await write(date, then: date)
        #expect(backend.client.sent.withLock { $0["POST"] } == 1, "the upload started while writing")
        await #expect(throws: CofferError.self) { try await backend.node(at: path) }
        try await first.commit(conflict: .fail)
        #expect(backend.client.sent.withLock { $0["PUT"] } == 4)
        var back: [UInt8] = []
        let object = try backend.client.get("copied.bin") { back += $0; return true }
        #expect(back == data && object?.modified == date)
        // Another date at the end: the parts sent are dropped and the file goes again.
        let later = Date(timeIntervalSince1970: 1_695_000_000)
        let second = try await write(date, then: later)
        try await second.commit(conflict: .replace)
        #expect(try backend.client.head("copied.bin")?.modified == later)
        // Aborted: nothing left on the server once the parts in flight have stopped.
        let third = try await write(date, then: date)
        await third.abort()
        var left = try backend.client.uploads(under: "")
        for _ in 0..<50 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            left = try backend.client.uploads(under: "")
        }
        #expect(left.isEmpty)
        #expect(try backend.client.head("copied.bin")?.modified == later)
    }

    /// A replace replaces the version there when the write began: one committed meanwhile
    /// by another writer makes it fail ("changed meanwhile"), big or small, and stays.
    @Test(arguments: [1 << 20, 12 << 20])
    func aReplaceDoesNotLoseAVersionCommittedMeanwhile(size: Int) async throws {
        guard S3TestServer.endpoint != nil else { return }
        let (backend, _) = try backend()
        let path = root.appending(trustedName: "shared.bin")
        try backend.client.put("shared.bin", body: .bytes([0]))
        let write = try await backend.makeWrite(at: path)
        try await write.write(Self.bytes(size, seed: 8))
        try backend.client.put("shared.bin", body: .bytes([1, 1]))  // another writer's version
        let refused = await #expect(throws: CofferError.self) { try await write.commit(conflict: .replace) }
        #expect(refused?.kind == .fileExists && refused?.detail == "s3-changed", "\(String(describing: refused))")
        #expect(try backend.client.head("shared.bin")?.size == 2)
        #expect(try backend.client.uploads(under: "").isEmpty)
        // Begun after that version: it replaces it.
        let later = try await backend.makeWrite(at: path)
        try await later.write([2, 2, 2])
        try await later.commit(conflict: .replace)
        #expect(try backend.client.head("shared.bin")?.size == 3)
    }

    /// A spool that cannot be read in full fails the commit: the upload is dropped, and
    /// nothing appears at the name.
    @Test func aFailedUploadLeavesNothing() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let (backend, scratch) = try backend()
        let path = root.appending(trustedName: "broken.bin")
        let write = try await backend.makeWrite(at: path)
        try await write.write(Self.bytes(16 << 20, seed: 3))
        for name in try FileManager.default.contentsOfDirectory(atPath: scratch + "/spool") {
            #expect(truncate(scratch + "/spool/" + name, 7 << 20) == 0)
        }
        let failure = await #expect(throws: CofferError.self) { try await write.commit(conflict: .fail) }
        #expect(failure?.kind == .ioError)
        await #expect(throws: CofferError.self) { try await backend.node(at: path) }
        #expect(try backend.client.uploads(under: "").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch + "/spool").isEmpty)
    }

    /// A cancelled commit, big or small, leaves nothing at the name and no upload.
    @Test(arguments: [1 << 20, 12 << 20])
    func aCancelledCommitLeavesNothing(size: Int) async throws {
        guard S3TestServer.endpoint != nil else { return }
        let (backend, _) = try backend()
        let path = root.appending(trustedName: "cancelled.bin")
        let write = try await backend.makeWrite(at: path)
        try await write.write(Self.bytes(size, seed: 5))
        let commit = Task {
            while !Task.isCancelled { await Task.yield() }
            try await write.commit(conflict: .fail)
        }
        commit.cancel()
        let outcome = await commit.result
        #expect(throws: CofferError.self) { try outcome.get() }
        await #expect(throws: CofferError.self) { try await backend.node(at: path) }
        #expect(try backend.client.uploads(under: "").isEmpty)
    }

    /// An upload a killed process left is in its ledger; the next backend that writes to the
    /// bucket drops it. A live process's ledger is left alone.
    @Test func uploadsLeftByAKilledProcessAreDropped() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let (backend, scratch) = try backend()
        let client = backend.client
        let left = try client.startUpload("left/behind.bin", contentType: nil, modified: nil)
        _ = try client.sendPart(1, of: left, body: .bytes(Self.bytes(1000, seed: 9)))
        let running = try client.startUpload("still/running.bin", contentType: nil, modified: nil)
        // The dead process's ledger: its name as a ledger is made, and no lock on it.
        let other = S3UploadLedger(folder: scratch + "/ledger", endpoint: client.configuration.endpoint,
                                   bucket: client.configuration.location.bucket)
        other.started(left)
        other.started(running)
        other.ended(running)
        let ledgerName = try #require(try FileManager.default.contentsOfDirectory(atPath: scratch + "/ledger").first)
        let dead = ledgerName.replacingOccurrences(of: PartialName.owner, with: "0dead0ff")
        try FileManager.default.copyItem(atPath: scratch + "/ledger/" + ledgerName, toPath: scratch + "/ledger/" + dead)
        _ = try await backend.makeWrite(at: root.appending(trustedName: "trigger.txt"))
        var remaining = try client.uploads(under: "")
        for _ in 0..<100 where remaining.count > 1 {
            try await Task.sleep(for: .milliseconds(100))
            remaining = try client.uploads(under: "")
        }
        // The dead ledger's open upload is gone; the "running" one (ended in its ledger, but
        // still open on the server, as another machine's would be) is not touched.
        #expect(remaining.map(\.key) == ["still/running.bin"])
        #expect(!FileManager.default.fileExists(atPath: scratch + "/ledger/" + dead))
        #expect(FileManager.default.fileExists(atPath: scratch + "/ledger/" + ledgerName), "this process's ledger is kept")
        try client.abandon(running)
    }

    /// Objects over the copy limit are copied in parts, keeping their bytes and date.
    @Test func aBigObjectMovesByCopyingInParts() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let (backend, _) = try backend()
        let data = Self.bytes(13 << 20, seed: 11)
        let date = Date(timeIntervalSince1970: 1_650_000_000)
        try backend.client.put("Folder/source.bin", body: .bytes(data), contentType: "application/x-test", modified: date)
        let folder = root.appending(trustedName: "Folder")
        try await backend.moveItem(at: folder.appending(trustedName: "source.bin"),
                                   to: root.appending(trustedName: "moved.bin"), conflict: .fail)
        var back: [UInt8] = []
        let object = try backend.client.get("moved.bin") { back += $0; return true }
        #expect(back == data)
        #expect(object?.modified == date)
        #expect(try backend.client.head("Folder/source.bin") == nil)
        #expect(try backend.client.uploads(under: "").isEmpty)
    }
}

/// The local cache of file contents: a file read through is read again without the server,
/// a changed one is fetched again, the cache stays under its limit and may vanish any time.
@Suite(.s3Server)
struct S3CacheTests {
    @Test func aFileReadThroughIsReadAgainFromTheCache() async throws {
        guard let client = try S3TestServer.newBucket() else { return }
        let scratch = NSTemporaryDirectory() + "coffer-cache-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch + "/cache", withIntermediateDirectories: true)
        var transfers = S3Transfers()
        transfers.cacheLimit = 5 << 20
        let backend = S3Backend(client: client, spoolFolder: scratch, cacheFolder: scratch + "/cache", transfers: transfers)
        let root = VirtualPath.root(of: "s3")
        func readThrough(_ name: String) async throws -> [UInt8] {
            let file = try await backend.openFile(at: root.appending(trustedName: name))
            var bytes: [UInt8] = []
            while true {
                let piece = try await file.read(upTo: 300_000)
                if piece.isEmpty { break }
                bytes += piece
            }
            await file.close()
            return bytes
        }
        func gets() -> Int { client.sent.withLock { $0["GET", default: 0] } }
        let first = S3TransferTests.bytes(2 << 20, seed: 1)
        try client.put("a.bin", body: .bytes(first))
        #expect(try await readThrough("a.bin") == first)
        let entries = try FileManager.default.contentsOfDirectory(atPath: scratch + "/cache")
        #expect(entries.count == 1)
        let before = gets()
        #expect(try await readThrough("a.bin") == first)
        #expect(gets() == before, "the second read came from the cache")
        // Replaced on the server: a new ETag, fetched again, the old entry gone.
        let second = S3TransferTests.bytes(2 << 20, seed: 2)
        try client.put("a.bin", body: .bytes(second))
        #expect(try await readThrough("a.bin") == second)
        #expect(gets() > before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch + "/cache").count == 1)
        // A partial read keeps nothing; the limit (5 MiB) drops the least recently used.
        let partial = try await backend.openFile(at: root.appending(trustedName: "a.bin"))
        _ = try await partial.read(at: 1_000_000, upTo: 10)
        await partial.close()
        try client.put("b.bin", body: .bytes(S3TransferTests.bytes(2 << 20, seed: 3)))
        try client.put("c.bin", body: .bytes(S3TransferTests.bytes(2 << 20, seed: 4)))
        _ = try await readThrough("b.bin")
        _ = try await readThrough("c.bin")
        let kept = try FileManager.default.contentsOfDirectory(atPath: scratch + "/cache")
        #expect(kept.count == 2, "\(kept)")
        #expect(!kept.contains(backend.cache!.entryName(key: "a.bin", etag: try client.head("a.bin")!.etag)))
        // Deleted under a reader: it reads on; the next read fetches.
        let open = try await backend.openFile(at: root.appending(trustedName: "c.bin"))
        try FileManager.default.removeItem(atPath: scratch + "/cache")
        #expect(try await open.read(at: 0, upTo: 2 << 20) == S3TransferTests.bytes(2 << 20, seed: 4))
        await open.close()
        #expect(try await readThrough("b.bin") == S3TransferTests.bytes(2 << 20, seed: 3))
        // Listing downloads nothing.
        let listed = gets()
        _ = try await backend.contentsOfFolder(at: root)
        #expect(gets() == listed + 1)
    }
}
