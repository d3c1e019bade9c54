public import CofferCore
#if canImport(Glibc)
import Glibc
#endif

/// The one loop that writes a buffer whole to a descriptor: it goes on after a short write
/// and after a signal, and stops at the first failure.
public enum WriteAll {
    /// Writes all of `bytes` with `write` — a `write(2)` or `send(2)` of the caller's, given a
    /// pointer and a count — calling `progressed` after each piece that went out.
    /// - Returns: `0` when all was written; else the `errno` of the failure (`EPIPE` for a
    ///   write that wrote nothing without saying why).
    @discardableResult
    public static func bytes(_ bytes: UnsafeRawBufferPointer, using write: (UnsafeRawPointer, Int) -> Int,
                             progressed: () -> Void = {}) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let written = write(base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            guard written > 0 else { return EPIPE }
            offset += written
            progressed()
        }
        return 0
    }

    /// Writes all of `bytes` to `fd` with `write(2)`.
    /// - Returns: `0`, or the `errno` of the failure.
    @discardableResult
    public static func bytes(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32 {
        Self.bytes(bytes) { Glibc.write(fd, $0, $1) }
    }

    /// Writes all of `bytes` to `fd`; a failure is the ``CofferError`` of its `errno` from
    /// `write`, concerning `path`.
    public static func bytes(_ bytes: some Collection<UInt8>, to fd: Int32, path: VirtualPath?) throws(CofferError) {
        let code = bytes.withContiguousStorageIfAvailable { Self.bytes(UnsafeRawBufferPointer($0), to: fd) }
            ?? Array(bytes).withUnsafeBytes { Self.bytes($0, to: fd) }
        if code != 0 { throw CofferError.system(code, "write", path: path) }
    }
}
