import CCofferSystem
public import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why `coffer rpc --listen unix:PATH` could not listen.
public enum ListenError: Error, Sendable, Equatable {
    /// The path does not fit in a socket address (107 bytes).
    case pathTooLong(String)
    /// Something that is not a socket is there; it is left alone.
    case notASocket(String)
    /// A server is listening there already.
    case inUse(String)
    /// A system call failed.
    case system(call: String, errno: Int32, path: String)

    /// What a person reads.
    public func message(in language: Language) -> String {
        switch self {
        case .pathTooLong(let path):
            LocalizedText("the socket path “\(path)” is longer than 107 bytes; choose a shorter one",
                          "套接字路径“\(path)”超过 107 字节；请换一个较短的路径")(language)
        case .notASocket(let path):
            LocalizedText("“\(path)” exists and is not a socket; it is left alone: remove it or choose another path",
                          "“\(path)”已存在且不是套接字，不会被替换：请删除它或换一个路径")(language)
        case .inUse(let path):
            LocalizedText("another server is already listening on “\(path)”", "已有另一个服务器在“\(path)”上监听")(language)
        case .system(let call, let code, let path):
            LocalizedText("cannot listen on “\(path)”: \(call): \(String(cString: strerror(code)))",
                          "无法在“\(path)”上监听：\(call)：\(String(cString: strerror(code)))")(language)
        }
    }
}

/// A Unix-domain stream socket that accepts clients, one connection each.
///
/// The socket file is created with mode 0600 (only its owner may connect). An existing
/// path is replaced only when it is the socket of a server that is gone (connecting to it
/// is refused); anything else there is an error and is left alone. ``close()`` removes the
/// socket file, if it is still the one this listener made.
///
/// Servers starting together on one stale socket would each remove it and listen, one on a
/// path that no longer names its socket: a lock on `PATH.lock`, held while listening, lets
/// exactly one of them clear and take the path. ``close()`` removes the lock file too, while
/// still holding it; a server that locked a file since removed sees that it no longer names
/// the path and locks the new one, so the lock is never split.
public final class UnixSocketListener: Sendable {
    public let path: String
    private let fd: Int32
    /// The descriptor holding the lock beside the socket.
    private let lock: Int32
    private let device: UInt64
    private let inode: UInt64

    public init(path: String) throws(ListenError) {
        self.path = path
        guard path.utf8.count <= Self.maxPathBytes else { throw .pathTooLong(path) }
        let lock = try Self.lockBeside(path)
        do throws(ListenError) {
            try Self.clearStaleSocket(at: path)
        } catch {
            _ = Glibc.close(lock)
            throw error
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            _ = Glibc.close(lock)
            throw .system(call: "socket", errno: errno, path: path)
        }
        // On Linux the mode of a socket's inode becomes the mode of the file bind creates,
        // so the socket is never reachable by others, not even for an instant.
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            _ = Glibc.close(lock)
            throw .system(call: "fchmod", errno: code, path: path)
        }
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            _ = Glibc.close(lock)
            if code == EADDRINUSE { throw .inUse(path) }
            throw .system(call: "bind", errno: code, path: path)
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            _ = Glibc.close(lock)
            throw .system(call: "lstat", errno: code, path: path)
        }
        self.fd = fd
        self.lock = lock
        self.device = UInt64(info.st_dev)
        self.inode = UInt64(info.st_ino)
    }

    static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Takes the lock on `PATH.lock` (made if missing): the descriptor, once it holds the lock
    /// on the file that is at that path now.
    private static func lockBeside(_ path: String) throws(ListenError) -> Int32 {
        let lockPath = path + ".lock"
        for _ in 0..<16 {
            let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard lock >= 0 else { throw .system(call: "open", errno: errno, path: lockPath) }
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                _ = Glibc.close(lock)
                if code == EWOULDBLOCK { throw .inUse(path) }
                throw .system(call: "flock", errno: code, path: lockPath)
            }
            // The server that held it may have removed the file as it stopped: this lock is
            // then on a file no one else can find, and the path's new one is taken instead.
            var held = stat(), named = stat()
            if fstat(lock, &held) == 0, lstat(lockPath, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                return lock
            }
            _ = Glibc.close(lock)
        }
        throw .inUse(path)
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Removes the socket of a server that is gone; refuses anything else.
    private static func clearStaleSocket(at path: String) throws(ListenError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw .system(call: "lstat", errno: errno, path: path)
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw .system(call: "socket", errno: errno, path: path) }
        defer { _ = Glibc.close(probe) }
        var address = address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if connected == 0 { throw .inUse(path) }
        guard errno == ECONNREFUSED else { throw .system(call: "connect", errno: errno, path: path) }
        guard unlink(path) == 0 || errno == ENOENT else { throw .system(call: "unlink", errno: errno, path: path) }
    }

    /// The next client's connected socket, or `nil` once the listener is closed.
    public func accept() -> Int32? {
        while true {
            let client = coffer_accept_cloexec(fd)
            if client >= 0 { return client }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO: continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // Out of descriptors for now: wait a little rather than spin.
                usleep(50_000)
                continue
            default:
                return nil  // closed (shut down), or broken
            }
        }
    }

    /// Stops accepting (an `accept()` waiting returns `nil`) and removes the socket file
    /// if it is still this listener's.
    public func close() {
        _ = shutdown(fd, Int32(SHUT_RDWR))
        var info = stat()
        if lstat(path, &info) == 0, UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode {
            _ = unlink(path)
        }
        // The lock file goes too, removed while still held (see ``lockBeside(_:)``).
        var held = stat(), named = stat()
        if fstat(lock, &held) == 0, lstat(path + ".lock", &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
            _ = unlink(path + ".lock")
        }
        _ = flock(lock, LOCK_UN)
    }

    deinit {
        _ = Glibc.close(fd)
        _ = Glibc.close(lock)
    }
}
