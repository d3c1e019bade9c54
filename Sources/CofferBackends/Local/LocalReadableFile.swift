import CCofferSystem
import CofferCore
import CofferRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A regular file opened for reading in a local backend.
final class LocalReadableFile: DescriptorReadableFile {
    let size: Int64
    let version: FileVersion?
    private let descriptor: Mutex<Descriptor?>
    private let path: VirtualPath

    /// The file open at `descriptor`, whose `statx` (taken on the open file) is `info`.
    init(descriptor: Descriptor, info: coffer_stat, path: VirtualPath) {
        self.descriptor = Mutex(descriptor)
        self.size = Int64(info.size)
        self.version = info.version
        self.path = path
    }

    func read(upTo count: Int) async throws -> [UInt8] {
        guard let fd = descriptor.withLock({ $0 }) else { throw CofferError(.invalidOperation, path: path) }
        let path = self.path
        return try await BlockingIO.run { _ throws(CofferError) in
            var buffer = [UInt8](repeating: 0, count: count)
            while true {
                let got = buffer.withUnsafeMutableBytes { Glibc.read(fd.raw, $0.baseAddress, count) }
                if got >= 0 { buffer.removeSubrange(got...); return buffer }
                if errno != EINTR { throw CofferError.lastSystemError("read", path: path) }
            }
        }
    }

    func read(at offset: Int64, upTo count: Int) async throws -> [UInt8] {
        guard let fd = descriptor.withLock({ $0 }) else { throw CofferError(.invalidOperation, path: path) }
        let path = self.path
        return try await BlockingIO.run { _ throws(CofferError) in
            do throws(CofferError) {
                return try fd.read(at: offset, length: count)
            } catch {
                throw CofferError(error.kind, path: path, detail: error.detail, errno: error.errno)
            }
        }
    }

    func openDescriptor() throws(CofferError) -> Int32 {
        guard let fd = descriptor.withLock({ $0 }) else { throw CofferError(.invalidOperation, path: path) }
        // Opening the descriptor's /proc entry gives the same file (even if renamed since) with
        // an offset of its own; a copy made by dup would share this one's.
        let reopened = Glibc.open("/proc/self/fd/\(fd.raw)", O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard reopened >= 0 else { throw CofferError.lastSystemError("open", path: path) }
        return reopened
    }

    func userAttributes() async -> UserAttributes {
        guard let fd = descriptor.withLock({ $0 }) else { return [:] }
        return (try? await BlockingIO.run { _ throws(CofferError) in ExtendedAttributes.userAttributes(of: fd.raw) }) ?? [:]
    }

    func close() async {
        descriptor.withLock { $0 = nil }
    }
}
