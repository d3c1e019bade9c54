#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// `coffer rpc --connect unix:PATH`: standard input and output joined to a running server's
/// socket (`rpc --listen unix:PATH`), byte for byte, for clients that can only start a
/// program and talk to its standard I/O (Neovim 0.7's `vim.lsp.rpc`, most editors' LSP
/// clients). Nothing is parsed: the server sees the client's own bytes and framing.
public enum SocketRelay {
    /// Why the relay could not start.
    public enum Failure: Error, Sendable {
        case tooLong(String)
        case notRunning(String)
        case system(call: String, errno: Int32)

        public var message: String {
            switch self {
            case .tooLong(let path): "the socket path is longer than \(UnixSocketListener.maxPathBytes) bytes: \(path)"
            case .notRunning(let path): "no Coffer server is listening on \(path) (start one with “coffer rpc --listen unix:\(path)”)"
            case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Connects to `path`, then copies both ways until the server closes the connection
    /// (or the client's input ends and the server has answered everything).
    /// - Returns: 0 when the connection ended normally.
    public static func run(connectingTo path: String) throws(Failure) -> Int32 {
        guard path.utf8.count <= UnixSocketListener.maxPathBytes else { throw .tooLong(path) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        var address = UnixSocketListener.address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            _ = close(fd)
            if code == ENOENT || code == ECONNREFUSED { throw .notRunning(path) }
            throw .system(call: "connect", errno: code)
        }
        signal(SIGPIPE, SIG_IGN)
        // The client's bytes go to the server on a thread of their own; the end of input is
        // passed on as a half close, so the server still answers what it was sent.
        let sender = Thread {
            if copy(from: 0, to: fd) { _ = shutdown(fd, Int32(SHUT_WR)) }
        }
        sender.stackSize = 1 << 20
        sender.start()
        _ = copy(from: fd, to: 1)
        _ = close(fd)
        return 0
    }

    /// Copies until the end of `source`; `false` when writing to `target` failed.
    private static func copy(from source: Int32, to target: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return true }
            var written = 0
            while written < count {
                let sent = buffer[written..<count].withUnsafeBytes { write(target, $0.baseAddress, $0.count) }
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return false }
                written += sent
            }
        }
    }
}
