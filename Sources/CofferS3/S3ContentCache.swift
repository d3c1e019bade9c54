import CofferCore
import CofferRuntime
import Foundation
import Synchronization

/// Contents of remote files kept on the local disk (the container's `Library/Caches/Remote`),
/// so a file read through once is read again without the network.
///
/// An entry is one whole object, named by a digest of where it is (endpoint, bucket, key) and
/// of its ETag: a changed object has a new ETag, so a stale entry is never found, and a
/// listing never fills the cache (only a read through does). Entries are written under a
/// partial name and renamed when complete; the least recently used are removed past
/// ``limit``. Everything here may be deleted at any time: an open entry is read to its end
/// from its descriptor, a fill whose folder vanished is dropped, and the next read fetches.
final class S3ContentCache: Sendable {
    let folder: String
    /// The most the entries may take, in bytes; objects over half of it are not kept.
    let limit: Int64
    private let scope: String

    init(folder: String, limit: Int64, endpoint: URL, bucket: String) {
        self.folder = folder
        self.limit = limit
        self.scope = "\(endpoint.absoluteString) \(bucket) "
    }

    /// The entry's file name for `key` at `etag`: the key's digest, then the ETag's.
    func entryName(key: String, etag: String) -> String {
        Self.digest(scope + key, 32) + "-" + Self.digest(etag, 16)
    }

    private static func digest(_ text: String, _ count: Int) -> String {
        String(Digest.hex((try? Digest.sha256(Array(text.utf8))) ?? []).prefix(count))
    }

    /// The entry for `key` at `etag`, open for reading, if it is held (and marked used).
    func open(key: String, etag: String, size: Int64) -> Int32? {
        let path = folder + "/" + entryName(key: key, etag: etag)
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size == size else {
            close(fd)
            return nil
        }
        _ = utimensat(AT_FDCWD, path, nil, 0)  // now: the least recently used go first
        return fd
    }

    /// A fill for `key` at `etag`, when an object of `size` bytes may be kept.
    func fill(key: String, etag: String, size: Int64) -> Fill? {
        guard size > 0, size <= limit / 2 else { return nil }
        let name = entryName(key: key, etag: etag)
        let partial = folder + "/" + PartialName.make()
        let fd = Glibc.open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        return Fill(cache: self, descriptor: fd, partial: partial, name: name, size: size)
    }

    /// An entry being written, from the first byte on; anything but the next bytes in
    /// order drops it.
    final class Fill: Sendable {
        private let cache: S3ContentCache
        private let partial: String
        private let name: String
        let size: Int64
        private let state: Mutex<(fd: Int32, written: Int64)>

        init(cache: S3ContentCache, descriptor: Int32, partial: String, name: String, size: Int64) {
            (self.cache, self.partial, self.name, self.size) = (cache, partial, name, size)
            state = Mutex((descriptor, 0))
        }

        /// Where the next bytes must start.
        var written: Int64 { state.withLock { $0.written } }

        /// Adds `bytes` read at `offset`; completes the entry at the end of the object.
        func add(_ bytes: ArraySlice<UInt8>, at offset: Int64) {
            let complete = state.withLock { state -> Bool in
                guard state.fd >= 0, offset == state.written else { return false }
                let count = bytes.withUnsafeBytes { Glibc.write(state.fd, $0.baseAddress, $0.count) }
                guard count == bytes.count else {
                    Self.drop(&state, partial)
                    return false
                }
                state.written += Int64(count)
                guard state.written == size else { return false }
                close(state.fd)
                state.fd = -1
                return true
            }
            if complete { cache.keep(partial, as: name) }
        }

        /// Drops what was written (a read out of order, or the file closed first).
        func cancel() { state.withLock { Self.drop(&$0, partial) } }

        private static func drop(_ state: inout (fd: Int32, written: Int64), _ partial: String) {
            guard state.fd >= 0 else { return }
            close(state.fd)
            unlink(partial)
            state.fd = -1
        }

        deinit { cancel() }
    }

    /// Puts a complete entry in place, removes the key's other versions, then the least
    /// recently used entries past the limit.
    private func keep(_ partial: String, as name: String) {
        guard rename(partial, folder + "/" + name) == 0 else {
            unlink(partial)
            return
        }
        let keyPart = name.prefix(32)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        var entries: [(name: String, size: Int64, used: Int)] = []
        let now = time(nil)
        for other in names {
            var status = stat()
            guard lstat(folder + "/" + other, &status) == 0 else { continue }
            if PartialName.isPartial(other) {
                // A fill a killed process left: no live fill is an hour without a write.
                if now - status.st_mtim.tv_sec > 3600 { unlink(folder + "/" + other) }
                continue
            }
            guard other.count == 49 && other.dropFirst(32).first == "-" else { continue }
            if other != name && other.hasPrefix(keyPart) {
                unlink(folder + "/" + other)
                continue
            }
            entries.append((other, Int64(status.st_size), status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec))
        }
        var total = entries.reduce(0) { $0 + $1.size }
        for entry in entries.sorted(by: { $0.used < $1.used }) where total > limit && entry.name != name {
            unlink(folder + "/" + entry.name)
            total -= entry.size
        }
    }
}
