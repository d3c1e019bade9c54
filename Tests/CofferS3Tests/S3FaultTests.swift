@testable import CofferS3
import CofferCore
import CofferHTTP
import CofferTestSupport
import Foundation
import Synchronization
import Testing

/// Servers that misbehave as real ones do now and then, which a healthy RGW cannot be made
/// to: one that never answers, one that hangs up halfway, one that is busy. Each failure
/// is bounded in time and tries, and words itself in both languages.
struct S3FaultTests {
    /// A TCP server on 127.0.0.1 answering each request (by its number, from 0) with the
    /// bytes `answer` gives, then closing; `nil` keeps the connection open and silent.
    final class MisbehavingServer: @unchecked Sendable {
        let port: Int
        private let counter = Counter()
        var requests: Int { counter.value.load(ordering: .relaxed) }
        final class Counter: Sendable { let value = Atomic<Int>(0) }
        private let listener: Int32

        init(_ answer: @escaping @Sendable (Int) -> [UInt8]?) throws {
            (listener, port) = try Loopback.listen()
            let listener = self.listener
            let counter = counter
            Thread.detachNewThread {
                while true {
                    let connection = Loopback.accept(listener)
                    guard connection >= 0 else { return }
                    let number = counter.value.add(1, ordering: .relaxed).oldValue
                    Thread.detachNewThread {
                        var buffer = [UInt8](repeating: 0, count: 65536)
                        _ = read(connection, &buffer, buffer.count)  // the request's head
                        guard let bytes = answer(number) else {
                            sleep(120)  // longer than any bound a test checks
                            close(connection)
                            return
                        }
                        _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                        close(connection)
                    }
                }
            }
        }

        deinit { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

        func client(stall: Duration = .seconds(2)) throws -> S3Client {
            let configuration = try S3Configuration.resolve(try S3Location(parsing: "s3://faults"), endpoint: "http://127.0.0.1:\(port)",
                                                            environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"],
                                                            home: "/nonexistent")
            return S3Client(configuration, timeouts: HTTPTimeouts(connect: .seconds(2), stall: stall), attempts: 3,
                            firstBackoff: .milliseconds(10))
        }
    }

    static func response(_ status: String, body: String = "", length: Int? = nil) -> [UInt8] {
        Array("HTTP/1.1 \(status)\r\nContent-Length: \(length ?? body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
    }

    /// The failure `call` ends with, run off the cooperative pool (it blocks for seconds).
    static func failure(_ call: @escaping @Sendable () throws -> Void) async -> CofferError? {
        switch await S3TestServer.offPool(call) {
        case .success: nil
        case .failure(let error): error as? CofferError
        }
    }

    @Test func aServerThatStopsAnsweringEndsTheRequestInBoundedTime() async throws {
        let server = try MisbehavingServer { _ in nil }
        // Timed on the thread that waits (not across the hop back to the test's task, which a
        // busy cooperative pool can delay by as much again).
        let took = Mutex<Duration?>(nil)
        let failure = await Self.failure {
            let started = ContinuousClock.now
            defer { took.withLock { $0 = ContinuousClock.now - started } }
            _ = try server.client().head("x")
        }
        #expect(failure?.detail == "s3-timeout", "\(String(describing: failure))")
        // Three tries of a two-second stall; the server would hold on for two minutes. The
        // bound only tells "ended by the client" from "ended by the server", loaded or not.
        let elapsed = try #require(took.withLock { $0 })
        #expect(elapsed < .seconds(60), "\(elapsed)")
    }

    @Test func aServerThatHangsUpHalfwayIsTriedAgainThenReported() async throws {
        let server = try MisbehavingServer { _ in Self.response("200 OK", body: "only part", length: 1000) }
        let failure = await Self.failure { try server.client().get("x") { _ in true } }
        #expect(failure?.kind == .ioError && failure?.detail == "s3-broken", "\(String(describing: failure))")
        #expect(server.requests == 3)
    }

    @Test func aBusyServerIsAskedAgainWithBackoff() async throws {
        let slowDown = "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
        let busy = try MisbehavingServer { _ in Self.response("503 Slow Down", body: slowDown) }
        let failure = await Self.failure { _ = try busy.client().head("x") }
        #expect(failure?.detail == "s3-busy")
        #expect(busy.requests == 3)
        // Busy once, then fine: the second try succeeds.
        let recovering = try MisbehavingServer { number in
            number == 0 ? Self.response("503 Slow Down", body: slowDown) : Self.response("200 OK")
        }
        let recovered = await S3TestServer.offPool { try recovering.client().head("x") }
        #expect((try? recovered.get()) != nil)
        #expect(recovering.requests == 2)
    }

    @Test func aNameThatDoesNotResolveSaysSo() async throws {
        let configuration = try S3Configuration.resolve(try S3Location(parsing: "s3://faults"), endpoint: "http://coffer-test.invalid",
                                                        environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"],
                                                        home: "/nonexistent")
        let client = S3Client(configuration, attempts: 1)
        let failure = await Self.failure { _ = try client.head("x") }
        #expect(failure?.detail == "s3-name-unresolved", "\(String(describing: failure))")
    }

    /// Every S3 failure a user can meet is worded in English and in Chinese, with a hint.
    static let worded: [(CofferError.Kind, String)] = [
        (.ioError, "s3-unreachable"), (.ioError, "s3-name-unresolved"), (.ioError, "s3-timeout"), (.ioError, "s3-certificate"),
        (.ioError, "s3-broken"), (.ioError, "s3-busy"), (.ioError, "s3-changed"), (.fileExists, "s3-changed"),
        (.noPermission, "s3-denied"), (.noSuchFile, "s3-no-bucket"),
    ]

    @Test func failuresAreWordedInBothLanguages() throws {
        let path = try VirtualPath(parsing: "b:/报告.txt")
        for (kind, detail) in Self.worded {
        for error in [CofferError(kind, path: path, detail: detail), CofferError(kind, detail: detail)] {
            let english = error.userMessage(in: .english), chinese = error.userMessage(in: .simplifiedChinese)
            #expect(english.text.contains("S3") && chinese.text.contains("S3"), "\(english) / \(chinese)")
            #expect(!english.text.contains(detail) && !chinese.text.contains(detail))
            #expect(chinese.text.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF })
            #expect(!english.hint.isEmpty && !chinese.hint.isEmpty)
            if error.path != nil { #expect(english.text.contains("b:/报告.txt")) }
        }
        }
    }
}
