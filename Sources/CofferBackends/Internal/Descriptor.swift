import CofferCore
import CofferRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, closed when the last reference goes away.
///
/// Directory descriptors are how the local backend stays confined: once a folder is
/// open, every later access is relative to it, so renaming or swapping the folder for
/// a link cannot redirect the work elsewhere.
final class Descriptor: Sendable {
    let raw: Int32

    init(_ raw: Int32) { self.raw = raw }

    deinit { _ = Glibc.close(raw) }
}

extension Descriptor {
    /// Up to `length` bytes from `offset` (`pread`, so the file position is left alone);
    /// fewer only at the end of the file.
    func read(at offset: Int64, length: Int) throws(CofferError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(0, length))
        var filled = 0
        while filled < buffer.count {
            let got = buffer.withUnsafeMutableBytes { raw in
                pread(self.raw, raw.baseAddress! + filled, raw.count - filled, off_t(offset) + off_t(filled))
            }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw CofferError.lastSystemError("pread", path: nil) }
            if got == 0 { break }
            filled += got
        }
        buffer.removeSubrange(filled...)
        return buffer
    }
}
