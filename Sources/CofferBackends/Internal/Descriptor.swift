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
