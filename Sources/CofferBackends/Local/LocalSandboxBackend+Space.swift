public import CofferCore
import CofferRuntime
import Foundation

extension LocalSandboxBackend: SpaceReportingBackend {
    /// The file system's size and free space (`fstatvfs` of the root, as an unprivileged user
    /// may fill it), and the sizes of the files under the root added up: a walk that stays on
    /// the root's file system and never follows a link.
    public func space() async throws -> StorageSpace {
        try await BlockingIO.run { _ throws(CofferError) in
            var system = statvfs()
            guard fstatvfs(self.root.raw, &system) == 0 else { throw CofferError.lastSystemError("fstatvfs", path: nil) }
            // (Clamped: a file system may report "unlimited" as the largest count.)
            func bytes(_ blocks: UInt) -> Int64 {
                let (product, overflowed) = Int64(clamping: blocks).multipliedReportingOverflow(by: Int64(clamping: system.f_frsize))
                return overflowed ? .max : product
            }
            let used = self.bytesUnderRoot()
            return StorageSpace(usedBytes: used, totalBytes: max(bytes(system.f_blocks), used), availableBytes: bytes(system.f_bavail))
        }
    }

    /// The sizes of the regular files under the root, added up: folders are opened by name from
    /// their parent (never through a link), at most 256 levels deep; one that cannot be read is
    /// passed over.
    private func bytesUnderRoot() -> Int64 {
        var total: Int64 = 0
        var rootInfo = stat()
        guard fstat(root.raw, &rootInfo) == 0 else { return 0 }
        func walk(_ folder: Int32, depth: Int) {
            guard let listing = fdopendir(folder) else {
                close(folder)
                return
            }
            defer { closedir(listing) }
            let descriptor = dirfd(listing)
            while let entry = readdir(listing) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name == "." || name == ".." { continue }
                var info = stat()
                guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFREG: total += Int64(info.st_size)
                case S_IFDIR where depth < 256 && info.st_dev == rootInfo.st_dev:
                    let inner = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    if inner >= 0 { walk(inner, depth: depth + 1) }
                default: continue
                }
            }
        }
        let start = openat(root.raw, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if start >= 0 { walk(start, depth: 0) }
        return total
    }
}
