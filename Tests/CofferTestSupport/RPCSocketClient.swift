public import Foundation
import Synchronization

/// A client of `coffer rpc --listen unix:PATH`, for end-to-end tests. It belongs to the test
/// that made it (``ProcessOwner``): its reading thread stops and its socket closes when the
/// test ends, if not before.
public final class RPCSocketClient: RPCClient, OwnedResource, @unchecked Sendable {
    private let fd: Int32
    /// Shared with the reading thread: `stopping` asks it to stop, `stopped` says it has.
    private final class Flags: Sendable {
        let stopping = Atomic<Bool>(false)
        let stopped = Atomic<Bool>(false)
    }
    private let flags = Flags()
    private let closed = Atomic<Bool>(false)

    /// Connects to the socket at `path`, trying for up to `timeout` seconds while the server
    /// starts.
    public init(path: String, framing: Framing = .ndjson, timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var connected: Int32 = -1
        while connected < 0 {
            connected = Self.connect(path)
            if connected < 0 {
                guard Date() < deadline else { throw RPCTimeout(description: "could not connect to \(path)") }
                usleep(10_000)
            }
        }
        fd = connected
        super.init(framing: framing)
        ProcessOwner.current?.adopt(self)
        Thread { [weak self, fd, flags] in
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while !flags.stopping.load(ordering: .acquiring) {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 100) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0, let client = self else { break }
                client.receive(Data(buffer[..<count]))
            }
            flags.stopped.store(true, ordering: .releasing)
        }.start()
    }

    /// A connected socket to `path`, or -1.
    public static func connect(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if result != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    /// Sends `data`, waiting while the socket is full for up to a minute (a server that stops
    /// reading fails the test by its answers' deadlines, never hangs it here).
    public override func sendRaw(_ data: Data) {
        guard !closed.load(ordering: .acquiring) else { return }
        let deadline = ContinuousClock.now + .seconds(60)
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count && ContinuousClock.now < deadline {
                let written = Foundation.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                if written > 0 {
                    offset += written
                } else if written < 0 && (errno == EAGAIN || errno == EINTR) {
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, 50)
                } else {
                    return
                }
            }
        }
    }

    /// Finishes sending, keeping the connection open for the answers (`shutdown(SHUT_WR)`).
    public func closeInput() { shutdown(fd, Int32(SHUT_WR)) }

    /// Goes away at once, as a client that crashes does.
    public func disconnect() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Stops reading and closes the socket, waiting (up to two seconds) for the reading thread.
    public func end() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        flags.stopping.store(true, ordering: .releasing)
        shutdown(fd, Int32(SHUT_RDWR))
        let deadline = ContinuousClock.now + .seconds(2)
        while !flags.stopped.load(ordering: .acquiring) && ContinuousClock.now < deadline { usleep(1000) }
        close(fd)
    }

    deinit { end() }
}
