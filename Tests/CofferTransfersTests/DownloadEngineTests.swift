import CCofferSystem
import CofferBackends
import CofferCore
@testable import CofferTransfers
import CofferTestSupport
import Foundation
import Synchronization
import Testing

@Suite(.serialized, .ownsProcesses) struct DownloadEngineTests {
    let directory = TemporaryDirectory("downloads")
    let server: TransferServer
    let size = 3 << 20

    init() throws { server = try TransferServer() }

    var partial: String { directory.url("file.download") }
    /// The partial data in `folder`, opened as the downloads cache opens it (for one fetch:
    /// the engine's lock goes with it).
    static func partialData(in folder: String) throws -> any OutputFile {
        try LocalSandboxBackend(rootPath: folder).openOutputFile(
            at: VirtualPath.root(of: "downloads").appending(trustedName: "file.download"), .existingOrNew)
    }
    func bytes() -> [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: partial))) ?? Data()) }

    func fetch(_ record: DownloadRecord, engine: DownloadEngine = DownloadEngine(),
               cancellation: @escaping @Sendable () -> Bool = { false }) async throws -> DownloadRecord {
        let folder = directory.url("")
        return try await offPool { try engine.fetch(record, into: try Self.partialData(in: folder), cancellation: cancellation) }
    }

    @Test func aWholeDownloadIsByteForByteAndKeepsItsOrigin() async throws {
        let url = server.url("/data/whole")
        let done = try await fetch(DownloadRecord(id: "1", url: url))
        #expect(done.state == .done && done.received == Int64(size) && done.total == Int64(size))
        #expect(bytes() == TransferServer.payload("whole", size: size))
        #expect(done.etag == "\"whole-v1\"")
        var origin = [UInt8](repeating: 0, count: 512)
        let fd = open(partial, O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        let length = coffer_fgetxattr(fd, "user.xdg.origin.url", &origin, origin.count)
        #expect(length > 0 && String(decoding: origin.prefix(max(0, length)), as: UTF8.self) == url)
    }

    @Test func aPartialDownloadResumesWithRangeAndIfRange() async throws {
        let full = TransferServer.payload("resume", size: size)
        try Data(full.prefix(1 << 20)).write(to: URL(fileURLWithPath: partial))
        var record = DownloadRecord(id: "2", url: server.url("/data/resume"))
        record.received = 1 << 20
        record.etag = "\"resume-v1\""
        let done = try await fetch(record)
        #expect(bytes() == full)
        #expect(try server.rangesSeen().last == "bytes=\(1 << 20)-")
        #expect(done.received == Int64(size))
    }

    @Test func aServerThatIgnoresRangesOrChangedItsFileStartsAgainFromZero() async throws {
        // Ranges ignored: the whole file comes, and replaces what was there.
        try Data(repeating: 7, count: 100_000).write(to: URL(fileURLWithPath: partial))
        var record = DownloadRecord(id: "3", url: server.url("/noranges/plain"))
        record.received = 100_000
        record.etag = "\"plain-v1\""
        _ = try await fetch(record)
        #expect(bytes() == TransferServer.payload("plain", size: size))
        // Changed since the first part came (a new ETag): If-Range gets the whole new version.
        _ = try await fetch(DownloadRecord(id: "4", url: server.url("/changing/moving")))
        #expect(bytes() == TransferServer.payload("moving", size: size, version: 1))
        var stale = DownloadRecord(id: "4", url: server.url("/changing/moving"))
        try Data(TransferServer.payload("moving", size: size, version: 1).prefix(1 << 20)).write(to: URL(fileURLWithPath: partial))
        stale.received = 1 << 20
        stale.etag = "\"moving-v1\""
        let renewed = try await fetch(stale)
        #expect(bytes() == TransferServer.payload("moving", size: size, version: 2))
        #expect(renewed.etag == "\"moving-v2\"")
    }

    @Test func aConnectionThatBreaksHalfwayIsResumed() async throws {
        let done = try await fetch(DownloadRecord(id: "5", url: server.url("/drop/broken")))
        #expect(bytes() == TransferServer.payload("broken", size: size))
        let ranges = try server.rangesSeen()
        #expect(ranges.last??.hasPrefix("bytes=") == true, "\(ranges)")
        #expect(done.state == .done)
    }

    /// A server that answers a resumed request with 206 whatever `If-Range` says, for a file
    /// that changed meanwhile: the other version is refused, never spliced onto the first
    /// part; the download starts again and ends as the new version, whole (issue 32).
    @Test func aRangeOfAnotherVersionIsNeverSplicedOn() async throws {
        let done = try await fetch(DownloadRecord(id: "5s", url: server.url("/splice/moved")))
        #expect(bytes() == TransferServer.payload("moved", size: size, version: 2))
        #expect(done.etag == "\"moved-v2\"" && done.received == Int64(size))
        let ranges = try server.rangesSeen().suffix(2)
        #expect(ranges.first??.hasPrefix("bytes=") == true && ranges.last! == nil, "resumed, refused, then whole: \(ranges)")
    }

    @Test func redirectsAreFollowedAndNamesComeFromTheServer() async throws {
        let moved = try await fetch(DownloadRecord(id: "6", url: server.url("/redirect/target")))
        #expect(bytes() == TransferServer.payload("target", size: size))
        #expect(moved.effectiveURL?.hasSuffix("/data/target?") == true || moved.effectiveURL?.contains("/data/target") == true)
        #expect(moved.suggestedName == "target")
        let named = try await fetch(DownloadRecord(id: "7", url: server.url("/named")))
        #expect(named.suggestedName == "年度报告.txt")
    }

    /// A redirect loop is said as one, and is final: never "the disk may have a problem".
    @Test func aRedirectLoopIsSaidAsOne() async throws {
        do {
            _ = try await fetch(DownloadRecord(id: "loop", url: server.url("/loop/round")))
            Issue.record("a redirect loop downloaded something")
        } catch let error as CofferError {
            #expect(error.detail == "transfer-redirects" && TransferError.isFinal(error))
            #expect(error.userMessage(in: .english).description.contains("redirect loop"), "\(error.userMessage(in: .english))")
            #expect(!error.userMessage(in: .english).description.contains("disk"))
        }
    }

    @Test func failuresSayWhatTheServerAnswered() async throws {
        await #expect(throws: CofferError.self) { try await fetch(DownloadRecord(id: "8", url: server.url("/missing"))) }
        do {
            _ = try await fetch(DownloadRecord(id: "8", url: server.url("/missing")))
        } catch let error as CofferError {
            #expect(error.kind == .noSuchFile && error.detail == "transfer-not-found")
        }
        var limited = DownloadEngine()
        limited.maxSize = 1000
        do {
            _ = try await fetch(DownloadRecord(id: "9", url: server.url("/data/big")), engine: limited)
            Issue.record("a download over the limit fails")
        } catch let error as CofferError {
            #expect(error.kind == .tooLarge)
        }
        // Nothing but http and https.
        await #expect(throws: CofferError.self) { try await fetch(DownloadRecord(id: "10", url: "file:///etc/passwd")) }
    }

    @Test func aCancelledDownloadKeepsWhatCameForLater() async throws {
        let big = 16 << 20
        let url = server.url("/slow/cancelled?size=\(big)")
        let engine = { var engine = DownloadEngine(); engine.checkpointBytes = 1 << 20; return engine }()
        let folder = directory.url("")
        // Stopped once 4 MiB are on disk, by the cancellation check the engine makes as data comes.
        final class Watch: Sendable {
            let stop = Mutex(false)
            let checkpoints = Mutex<[DownloadRecord]>([])
        }
        let watch = Watch()
        let cancelled: DownloadRecord? = try await offPool { () throws -> DownloadRecord? in
            do {
                _ = try engine.fetch(DownloadRecord(id: "11", url: url), into: try Self.partialData(in: folder),
                                     cancellation: { watch.stop.withLock { $0 } }) { record in
                    watch.checkpoints.withLock { $0.append(record) }
                    if record.received >= 4 << 20 { watch.stop.withLock { $0 = true } }
                }
                return nil
            } catch {
                #expect((error as? CofferError)?.kind == .cancelled)
                return watch.checkpoints.withLock { $0.last }
            }
        }
        let kept = try #require(cancelled, "the download was cancelled")
        #expect(kept.received >= 4 << 20 && kept.received < Int64(big))
        // Resumed later, it ends identical to the server's file.
        let done = try await fetch(kept)
        #expect(done.received == Int64(big))
        #expect(bytes() == TransferServer.payload("cancelled", size: big))
        #expect(try server.rangesSeen().last == "bytes=\(kept.received)-")
    }

    @Test func httpsIsTrustedOnlyWithItsAuthority() async throws {
        let (ca, certificate, key) = try TransferServer.makeCertificates(in: directory.url("tls"))
        let secure = try TransferServer(certificate: certificate, key: key)
        let url = secure.url("/data/secure?size=100000")
        do {
            _ = try await fetch(DownloadRecord(id: "12", url: url))
            Issue.record("a certificate no authority here vouches for is refused")
        } catch let error as CofferError {
            #expect(error.detail == "transfer-certificate")
        }
        let done = try await fetch(DownloadRecord(id: "13", url: url), engine: DownloadEngine(caFile: ca))
        #expect(done.state == .done && bytes() == TransferServer.payload("secure", size: 100_000))
    }
}
