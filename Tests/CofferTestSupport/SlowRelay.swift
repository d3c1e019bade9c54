import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 in front of a real server that passes requests on at once and
/// answers at a bounded rate, so that a test can be sure a transfer is still running when
/// it cancels it, however fast the server and however late the test's thread wakes up.
/// Bytes are passed unchanged (a signed S3 request stays valid: the relay's port is in
/// the `Host` the client signed).
public final class SlowRelay: @unchecked Sendable {
    public let port: Int
    private let listener: Int32

    /// Relays to `127.0.0.1:target`, sending at most `bytesPerTick` of each answer every
    /// `tick` (the default is about 6 MiB a second).
    public init(to target: Int, bytesPerTick: Int = 64 << 10, tick: Duration = .milliseconds(10)) throws {
        (listener, port) = try Loopback.listen()
        let listener = self.listener
        let pause = useconds_t(tick.components.seconds * 1_000_000 + tick.components.attoseconds / 1_000_000_000_000)
        Thread.detachNewThread {
            while true {
                let client = Loopback.accept(listener)
                guard client >= 0 else { return }
                guard let server = Loopback.connect(to: target) else {
                    close(client)
                    continue
                }
                let pair = Pair(client, server)
                Thread.detachNewThread { pair.pump(from: client, to: server, chunk: 64 << 10, pause: 0) }
                Thread.detachNewThread { pair.pump(from: server, to: client, chunk: bytesPerTick, pause: pause) }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// `http://127.0.0.1:PORT`, for a client's endpoint.
    public var endpoint: String { "http://127.0.0.1:\(port)" }
}

/// Both ends of one relayed connection, closed once both directions have ended (never while
/// the other pump could still use a descriptor number).
private final class Pair: @unchecked Sendable {
    private let ends: (Int32, Int32)
    private let finished = Mutex(0)

    init(_ first: Int32, _ second: Int32) { ends = (first, second) }

    /// Copies until either side closes, then shuts both down so the other pump ends too.
    func pump(from source: Int32, to sink: Int32, chunk: Int, pause: useconds_t) {
        var buffer = [UInt8](repeating: 0, count: chunk)
        copying: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, chunk) }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(sink, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { break copying }
                sent += written
            }
            if pause > 0 { usleep(pause) }
        }
        shutdown(ends.0, Int32(SHUT_RDWR))
        shutdown(ends.1, Int32(SHUT_RDWR))
        if finished.withLock({ $0 += 1; return $0 }) == 2 {
            close(ends.0)
            close(ends.1)
        }
    }
}
