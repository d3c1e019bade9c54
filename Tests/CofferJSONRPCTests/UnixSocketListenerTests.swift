@testable import CofferJSONRPC
import CofferTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--listen unix:PATH` when a stale socket is there and two servers start at once: exactly
/// one of them takes the path, and the path names its socket (issue 32: 1 in 20 both ran).
struct UnixSocketListenerTests {
    /// A socket file nobody listens on, as a killed server leaves it.
    func staleSocket(at path: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = UnixSocketListener.address(path)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(fd)
    }

    @Test func twoServersOnOneStaleSocketNeverBothListen() async throws {
        let directory = TemporaryDirectory("socket-race")
        for round in 0..<40 {
            let path = directory.url("s\(round).sock")
            staleSocket(at: path)
            let start = DispatchSemaphore(value: 0)
            let outcomes = Mutex<[Result<UnixSocketListener, ListenError>]>([])
            let threads = (0..<2).map { _ in
                Thread {
                    start.wait()
                    let outcome = Result { () throws(ListenError) in try UnixSocketListener(path: path) }
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            threads.forEach { $0.start() }
            start.signal()
            start.signal()
            while outcomes.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(1)) }
            let listening = outcomes.withLock { $0.compactMap { try? $0.get() } }
            #expect(listening.count == 1, "round \(round): \(outcomes.withLock { $0 })")
            #expect(outcomes.withLock { $0.contains { if case .failure(.inUse) = $0 { true } else { false } } })
            // The path is the winner's: a client reaches it.
            let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = UnixSocketListener.address(path)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            close(client)
            #expect(connected == 0, "round \(round)")
            listening.forEach { $0.close() }
        }
    }
}
