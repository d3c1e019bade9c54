import CCofferSystem
public import CofferCore
import CofferRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A local folder's entries read a batch at a time, as a program reads a folder with `readdir`:
/// a folder of 100,000 entries gives its first ones at once, and nothing holds all its names.
/// `.` and `..` and Coffer's partial files are left out; entries come in the file system's order.
/// Blocking: read it off Swift's cooperative pool. It holds a descriptor of the folder until
/// ``close()`` (or its end).
public final class FolderEntryReader: Sendable {
    /// The `coffer_dir` stream (its address), 0 once closed.
    private let stream: Mutex<UInt>
    /// The folder read.
    public let path: VirtualPath

    init(stream: OpaquePointer, path: VirtualPath) {
        self.stream = Mutex(UInt(bitPattern: stream))
        self.path = path
    }

    deinit { close() }

    /// Up to `count` more entries; none once the folder has been read through. A batch cut short
    /// by a failure is given as far as it was read, and the next call reports the failure.
    /// - Throws: what `readdir` fails with (`ioError`), or `invalidOperation` once closed.
    public func next(_ count: Int) throws(CofferError) -> [FolderEntry] {
        try stream.withLock { address throws(CofferError) -> [FolderEntry] in
            guard let stream = OpaquePointer(bitPattern: address) else { throw CofferError(.invalidOperation, path: path, detail: "closed") }
            var entries: [FolderEntry] = []
            entries.reserveCapacity(min(count, 1024))
            var type: UInt8 = 0
            let folder = coffer_dirfd(stream)
            while entries.count < count, let raw = coffer_readdir(stream, &type) {
                if let entry = LocalSandboxBackend.entry(raw, type: type, in: folder) { entries.append(entry) }
            }
            // What was read before a failure is given; the next call meets the failure again.
            if entries.isEmpty, count > 0, errno != 0 { throw CofferError.lastSystemError("readdir", path: path) }
            return entries
        }
    }

    /// Starts again from the folder's first entry (what was added or removed since shows).
    public func rewind() {
        stream.withLock { address in OpaquePointer(bitPattern: address).map { coffer_rewinddir($0) } }
    }

    /// Lets the folder go; later reads fail.
    public func close() {
        let old = stream.withLock { address in
            defer { address = 0 }
            return address
        }
        OpaquePointer(bitPattern: old).map { coffer_closedir($0) }
    }
}
