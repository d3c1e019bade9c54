@testable import CofferS3
import CofferCore
import CofferHTTP
import Foundation
import Testing

/// The S3 client against a real server: the Ceph RGW that `.ci/run` starts
/// (`COFFER_TEST_S3_ENDPOINT`, with `COFFER_TEST_S3_ACCESS_KEY` and `COFFER_TEST_S3_SECRET_KEY`,
/// `test:tester` and `testing` by default). Without an endpoint these tests are skipped,
/// unless `COFFER_REQUIRE_S3=1` (set by `.ci/run`) makes that a failure.
@Suite(.s3Server)
struct S3ClientTests {
    static let environment = S3TestServer.environment
    static let endpoint = S3TestServer.endpoint
    static let required = S3TestServer.required

    static func client(bucket: String = "coffer-\(UUID().uuidString.prefix(8).lowercased())",
                       secret: String? = nil, endpoint: String? = nil, attempts: Int = 4) throws -> S3Client {
        let configuration = try S3Configuration.resolve(
            try S3Location(parsing: "s3://\(bucket)"), endpoint: endpoint ?? Self.endpoint,
            environment: ["AWS_ACCESS_KEY_ID": environment["COFFER_TEST_S3_ACCESS_KEY"] ?? "test:tester",
                          "AWS_SECRET_ACCESS_KEY": secret ?? environment["COFFER_TEST_S3_SECRET_KEY"] ?? "testing"],
            home: "/nonexistent")
        return S3Client(configuration, timeouts: HTTPTimeouts(connect: .seconds(3), stall: .seconds(10)), attempts: attempts,
                        firstBackoff: .milliseconds(20))
    }

    /// A client on a new bucket (`nil`, a failure, when S3 is required and not configured).
    func bucket() throws -> S3Client? {
        guard Self.endpoint != nil else {
            Issue.record("COFFER_REQUIRE_S3=1 but COFFER_TEST_S3_ENDPOINT is not set")
            return nil
        }
        return try S3TestServer.newBucket()
    }

    func read(_ client: S3Client, _ key: String, range: Range<Int64>? = nil) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try client.get(key, range: range) { bytes += $0; return true }
        return bytes
    }

    @Test func objectsAreWrittenReadAndRemoved() throws {
        guard let client = try bucket() else { return }
        let body = Array("héllo, 世界\n".utf8)
        let modified = Date(timeIntervalSince1970: 1_700_000_000.25)
        let etag = try client.put("Notes/a b+c%d 报告.txt", body: .bytes(body), contentType: "text/plain", modified: modified)
        #expect(etag?.isEmpty == false)
        let head = try #require(try client.head("Notes/a b+c%d 报告.txt"))
        #expect(head.size == Int64(body.count) && head.etag == etag)
        #expect(abs(head.modified.timeIntervalSince(modified)) < 0.001)
        #expect(try read(client, "Notes/a b+c%d 报告.txt") == body)
        #expect(try read(client, "Notes/a b+c%d 报告.txt", range: 1..<4) == Array(body[1..<4]))
        #expect(try client.head("Notes/missing") == nil)
        let missing = #expect(throws: CofferError.self) { try read(client, "Notes/missing") }
        #expect(missing?.kind == .noSuchFile)
        try client.delete("Notes/a b+c%d 报告.txt")
        #expect(try client.head("Notes/a b+c%d 报告.txt") == nil)
        // A large body streamed in pieces.
        let big = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var offset = 0
        try client.put("big.bin", body: .stream(length: Int64(big.count)) { buffer in
            let count = min(buffer.count, big.count - offset)
            big.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
            offset += count
            return count
        })
        #expect(try read(client, "big.bin") == big)
    }

    /// In a bucket with versioning on too, where Ceph RGW 16.2 gets the conditions wrong
    /// (the client checks them itself there). The requests block, so they run off the
    /// cooperative pool, and their outcomes are checked here.
    @Test(arguments: [false, true]) func conditionalWritesNeverLoseAnUpdate(versioned: Bool) async throws {
        guard let client = try bucket() else { return }
        struct Outcomes: Sendable {
            var versioning = false, first: String?, again: CofferError?, second: String?, stale: CofferError?, read: [UInt8] = []
        }
        let outcomes = try await S3TestServer.offPool { () throws -> Outcomes in
            var outcomes = Outcomes()
            if versioned { try client.setVersioning(enabled: true) }
            outcomes.versioning = try client.versioningEnabled()
            outcomes.first = try client.put("doc.txt", body: .bytes(Array("one".utf8)), condition: .absent)
            do { try client.put("doc.txt", body: .bytes(Array("two".utf8)), condition: .absent) } catch { outcomes.again = error as? CofferError }
            outcomes.second = try client.put("doc.txt", body: .bytes(Array("two".utf8)), condition: .unchanged(etag: outcomes.first ?? ""))
            do {
                try client.put("doc.txt", body: .bytes(Array("three".utf8)), condition: .unchanged(etag: outcomes.first ?? ""))
            } catch {
                outcomes.stale = error as? CofferError
            }
            try client.get("doc.txt") { outcomes.read += $0; return true }
            return outcomes
        }.get()
        #expect(outcomes.versioning == versioned)
        #expect(outcomes.first != nil && outcomes.second != nil && outcomes.second != outcomes.first)
        #expect(outcomes.again?.kind == .fileExists)
        #expect(outcomes.stale?.kind == .fileExists)
        #expect(outcomes.read == Array("two".utf8))
    }

    @Test func listingsArePagedAndFoldedAtSlashes() async throws {
        guard let client = try bucket() else { return }
        var keys: [String] = []
        for index in 0..<230 { keys.append(String(format: "Flat/item %03d.txt", index)) }
        keys += ["Deep/a/1.txt", "Deep/b/2.txt", "Deep/c.txt", "Deep/empty/", "top.txt", "空 格/名字.txt"]
        try await S3TestServer.put(keys, with: client) { key in .bytes(key.hasSuffix("/") ? [] : Array(key.utf8)) }
        var listed: [String] = []
        var continuation: String?
        var pages = 0
        repeat {
            let page = try client.list(prefix: "Flat/", continuation: continuation, maxKeys: 100)
            listed += page.objects.map(\.key)
            continuation = page.continuation
            pages += 1
        } while continuation != nil
        #expect(pages == 3 && listed == keys.filter { $0.hasPrefix("Flat/") })
        let deep = try client.list(prefix: "Deep/")
        #expect(deep.objects.map(\.key) == ["Deep/c.txt"])
        #expect(deep.commonPrefixes == ["Deep/a/", "Deep/b/", "Deep/empty/"])
        let top = try client.list(prefix: "")
        #expect(top.objects.map(\.key) == ["top.txt"] && top.commonPrefixes == ["Deep/", "Flat/", "空 格/"])
        #expect(top.objects.first?.size == Int64("top.txt".utf8.count))
        let flat = try client.list(prefix: "Deep/", delimiter: nil)
        #expect(flat.objects.map(\.key) == ["Deep/a/1.txt", "Deep/b/2.txt", "Deep/c.txt", "Deep/empty/"])
    }

    @Test func failuresAreClearAndBounded() throws {
        guard let client = try bucket() else { return }
        let absent = try Self.client(bucket: "coffer-no-such-bucket-\(UUID().uuidString.prefix(6).lowercased())")
        let noBucket = #expect(throws: CofferError.self) { try absent.list(prefix: "") }
        #expect(noBucket?.kind == .noSuchFile && noBucket?.detail == "s3-no-bucket")
        let badKey = try Self.client(bucket: client.configuration.location.bucket, secret: "wrong-secret")
        let refused = #expect(throws: CofferError.self) { try badKey.list(prefix: "") }
        #expect(refused?.kind == .noPermission)
        #expect(refused.map { "\($0)" }?.contains("wrong-secret") == false)
        // Nothing listens on port 9: refused at once, tried a bounded number of times.
        let started = ContinuousClock.now
        let nobody = try Self.client(endpoint: "http://127.0.0.1:9", attempts: 3)
        let unreachable = #expect(throws: CofferError.self) { try nobody.head("x") }
        #expect(unreachable?.kind == .ioError && unreachable?.detail == "s3-unreachable")
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}

/// The S3 server the tests use, from the environment.
enum S3TestServer {
    static let environment = ProcessInfo.processInfo.environment
    static let endpoint = environment["COFFER_TEST_S3_ENDPOINT"]
    static let required = environment["COFFER_REQUIRE_S3"] == "1"

    /// A client on a new bucket of the test server; `nil` without a server (the suites are
    /// then skipped, or one test records that a required server is missing).
    static func newBucket() throws -> S3Client? {
        guard endpoint != nil else { return nil }
        let client = try S3ClientTests.client()
        try client.createBucket()
        return client
    }

    /// Writes each key with the body `body` gives it, from eight threads at once.
    static func put(_ keys: [String], with client: S3Client, body: @escaping @Sendable (String) -> HTTPBody) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            let slice = max(1, (keys.count + 7) / 8)
            for start in stride(from: 0, to: keys.count, by: slice) {
                let part = Array(keys[start..<min(start + slice, keys.count)])
                group.addTask { try await offPool { for key in part { try client.put(key, body: body(key)) } }.get() }
            }
            try await group.waitForAll()
        }
    }

    /// Runs blocking calls (the client's) on a thread of their own: on the cooperative pool,
    /// which has a thread per core, they would stall every other test in the process.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Result { try body() }) }
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a suite only with a test S3 server (or fails it when one is required).
    static var s3Server: Self {
        .enabled(if: S3TestServer.endpoint != nil || S3TestServer.required,
                 "no S3 server: set COFFER_TEST_S3_ENDPOINT (.ci/run starts a Ceph RGW)")
    }
}

/// rclone's date header, exact to the nanosecond for times Coffer keeps.
@Test func modificationTimesKeepTheirFraction() {
    for time in [1_700_000_000.25, 1_600_000_000.5, 1_650_000_000, 1_234_567_890.123456] {
        let text = S3Client.mtimeText(Date(timeIntervalSince1970: time))
        #expect(S3Client.mtime(text) == Date(timeIntervalSince1970: time), "\(text)")
    }
    #expect(S3Client.mtimeText(Date(timeIntervalSince1970: 1_700_000_000.25)) == "1700000000.25")
}
