import CCofferSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// TCP on 127.0.0.1, for the test servers that stand in for a misbehaving or slow network.
public enum Loopback {
    /// A listening socket on a free port: the descriptor and the port.
    public static func listen() throws -> (descriptor: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = self.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && Glibc.listen(listener, 16) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The next connection on `listener`, its descriptor closed on exec; -1 once the listener
    /// is shut down.
    public static func accept(_ listener: Int32) -> Int32 {
        coffer_accept_cloexec(listener)
    }

    /// A socket connected to `port`, or `nil` when nothing listens there.
    public static func connect(to port: Int) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var destination = address(port: port)
        let connected = withUnsafePointer(to: &destination) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
