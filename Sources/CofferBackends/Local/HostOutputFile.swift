import CCofferSystem
public import CofferCore
import CofferRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``OutputFile`` of this computer's file system: the one place outside a backend's pending
/// writes where Coffer writes bytes at an offset (uploads' chunks, downloads, preview copies).
public final class HostOutputFile: OutputFile {
    /// What opening does when the file is not there, or is.
    public enum Opening: Sendable {
        /// Make it; it must not exist yet.
        case new
        /// Make it if it is not there; otherwise open it as it is.
        case existingOrNew
        /// It must exist.
        case existing
    }

    private let handle: Descriptor
    /// How errors name the file.
    private let path: VirtualPath?

    public var descriptor: Int32 { handle.raw }

    init(_ handle: Descriptor, path: VirtualPath?) {
        self.handle = handle
        self.path = path
    }

    static func flags(_ opening: Opening) -> Int32 {
        let base = O_RDWR | O_CLOEXEC | O_NOFOLLOW
        switch opening {
        case .new: return base | O_CREAT | O_EXCL
        case .existingOrNew: return base | O_CREAT
        case .existing: return base
        }
    }

    /// An unnamed file in the folder at host path `folder` (made and unlinked at once, mode
    /// 0600): gone with its last descriptor, whatever ends the process.
    public static func unnamed(inFolder folder: String, reporting path: VirtualPath? = nil) throws(CofferError) -> HostOutputFile {
        for _ in 0..<8 {
            let name = "\(folder)/.scratch-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
            let fd = open(name, flags(.new), 0o600)
            if fd < 0, errno == EEXIST { continue }
            guard fd >= 0 else { throw CofferError.lastSystemError("open", path: path) }
            unlink(name)
            return HostOutputFile(Descriptor(fd), path: path)
        }
        throw CofferError(.ioError, path: path, detail: "no free scratch name")
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(CofferError) {
        var written = 0
        while written < bytes.count {
            let count = pwrite(handle.raw, bytes.baseAddress! + written, bytes.count - written, off_t(offset) + off_t(written))
            if count < 0 {
                if errno == EINTR { continue }
                throw CofferError.lastSystemError("write", path: path)
            }
            written += count
        }
    }

    public func size() throws(CofferError) -> Int64 {
        var info = stat()
        guard fstat(handle.raw, &info) == 0 else { throw CofferError.lastSystemError("fstat", path: path) }
        return Int64(info.st_size)
    }

    public func truncate(to size: Int64) throws(CofferError) {
        guard ftruncate(handle.raw, off_t(size)) == 0 else { throw CofferError.lastSystemError("ftruncate", path: path) }
    }

    public func lockExclusively() -> Bool { flock(handle.raw, LOCK_EX | LOCK_NB) == 0 }

    public func synchronizeData() -> Bool { fdatasync(handle.raw) == 0 }

    public func synchronize() throws(CofferError) {
        guard fsync(handle.raw) == 0 else { throw CofferError.lastSystemError("fsync", path: path) }
    }

    public func startWritingBack(offset: Int64, length: Int64) {
        _ = coffer_start_writeback(handle.raw, offset, length)
    }

    public func setAttribute(_ name: String, to value: [UInt8]) {
        _ = coffer_fsetxattr(handle.raw, name, value, value.count, 0)
    }
}

extension LocalSandboxBackend {
    /// Opens the file at `path` to be written a piece at a time, below this backend's root and
    /// never through a link (an upload's data, a download's). A new file gets mode 0600.
    /// Errors name the path, unless `namingPath` is false (a place its user does not know).
    public func openOutputFile(at path: VirtualPath, _ opening: HostOutputFile.Opening,
                               namingPath: Bool = true) throws(CofferError) -> HostOutputFile {
        let named = namingPath ? path : nil
        guard writable else { throw CofferError(.readOnly, path: named) }
        let parent = try openParent(of: path)
        let fd = openat(parent.raw, path.name, HostOutputFile.flags(opening), 0o600)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: named) }
        return HostOutputFile(Descriptor(fd), path: named)
    }
}
