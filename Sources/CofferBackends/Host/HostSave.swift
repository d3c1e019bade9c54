import CCofferSystem
public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension HostBookmark {
    /// Writes `bytes` as the content of the bookmarked file, as other Linux editors save.
    ///
    /// - An advisory lock (`flock`) is held on the file while it is checked and saved, as
    ///   editors that lock coordinate (and `NSFileCoordinator` on Apple platforms).
    /// - With a version, the file must still be at it (`changedSinceRead` otherwise); a file
    ///   that vanished or was replaced by another is `staleBookmark`. Nothing is written then.
    /// - Usually the new content is written under a temporary name in the same folder, with
    ///   the file's mode, owner, extended attributes and ACL, made durable, and renamed into
    ///   place: a reader sees the old file or the new one, never half of one. The old file
    ///   goes to the desktop trash (never deleted).
    /// - A file with several hard links, or opened through a symbolic link, is rewritten in
    ///   place instead, so the other names and the link keep reaching it (a rename would
    ///   part them); its old content is copied to the desktop trash first.
    ///
    /// - Returns: the bookmark updated to the saved file, with what was written.
    public func save(_ bytes: [UInt8], mode: HostSaveMode, policy: HostAccessPolicy,
                     trash: HostTrash) throws(CofferError) -> HostSaveResult {
        let item = try locate(using: policy)
        let folderPath = (item.path as NSString).deletingLastPathComponent
        let folder = try policy.open(folderPath.isEmpty ? "/" : folderPath)
        guard folder.isFolder else { throw CofferError(.notADirectory, detail: folder.name) }
        let fileName = HostAccess.lastComponent(of: item.path)
        try HostLock.exclusive(item.descriptor, name: name)
        defer { _ = flock(item.descriptor.raw, LOCK_UN) }

        // Checked under the lock: what is there now is what the caller read.
        var current = coffer_stat()
        guard coffer_fstat(item.descriptor.raw, &current) == 0 else { throw CofferError.lastSystemError("fstat", path: nil) }
        var named = coffer_stat()
        guard coffer_statx(folder.descriptor.raw, fileName, &named) == 0,
              named.inode == current.inode, named.device == current.device
        else { throw CofferError(.staleBookmark, detail: name) }
        if case .replace(let wanted?) = mode, current.version != wanted {
            throw CofferError.changedSinceRead(hostFileNamed: name, modified: current.modificationDate)
        }

        let inPlace = current.nlink > 1 || linkPath != nil
        switch mode {
        case .replace where inPlace:
            let trashed = try HostRewrite.keepCopy(of: item, named: fileName, in: folder, trash: trash)
            let info = try HostRewrite.rewrite(fileName, in: folder, expecting: current, with: bytes, name: name)
            return HostSaveResult(bookmark: updated(info, path: item.path), savedPath: item.path, version: info.version,
                                  size: Int64(info.size), modified: info.modificationDate, trashedID: trashed)
        case .replace:
            let temporary = try HostRewrite.writeCopy(bytes, like: item, in: folder, name: name)
            // Set when the temporary name holds the old content (a swap that could not be undone).
            var holdsOldContent = false
            do throws(CofferError) {
                // Looked at once more, just before: a write that slipped in is not lost.
                var last = coffer_stat()
                guard coffer_fstat(item.descriptor.raw, &last) == 0, last.version == current.version else {
                    throw CofferError.changedSinceRead(hostFileNamed: name, modified: last.modificationDate)
                }
                let id = try HostRewrite.swapIn(temporary.name, for: fileName, in: folder, trash: trash, name: name,
                                                holdsOldContent: &holdsOldContent)
                _ = fsync(folder.descriptor.raw)
                return HostSaveResult(bookmark: updated(temporary.info, path: item.path), savedPath: item.path,
                                      version: temporary.info.version, size: Int64(temporary.info.size),
                                      modified: temporary.info.modificationDate, trashedID: id)
            } catch {
                if !holdsOldContent { _ = unlinkat(folder.descriptor.raw, temporary.name, 0) }
                throw error
            }
        case .keepBoth:
            let temporary = try HostRewrite.writeCopy(bytes, like: item, in: folder, name: name)
            let placed = try UniqueName.claim(fileName) { candidate throws(CofferError) -> String? in
                do throws(CofferError) {
                    try Placement.place(temporary.name, as: candidate, in: folder.descriptor, conflict: .fail, path: .root())
                    return candidate
                } catch where error.kind == .fileExists {
                    return nil
                }
            }
            guard let placed else {
                _ = unlinkat(folder.descriptor.raw, temporary.name, 0)
                throw CofferError(.fileExists, detail: name)
            }
            _ = fsync(folder.descriptor.raw)
            let path = folder.path == "/" ? "/" + placed : folder.path + "/" + placed
            return HostSaveResult(bookmark: self, savedPath: path, version: temporary.info.version,
                                  size: Int64(temporary.info.size), modified: temporary.info.modificationDate, trashedID: nil)
        }
    }

    /// This bookmark, naming the file described by `info` at `path`.
    private func updated(_ info: coffer_stat, path: String) -> HostBookmark {
        var copy = self
        copy.hostPath = path
        copy.device = info.device
        copy.inode = info.inode
        copy.creationDate = info.has_btime != 0
            ? Date(timeIntervalSince1970: Double(info.btime_sec) + Double(info.btime_nsec) / 1e9) : nil
        copy.size = Int64(info.size)
        copy.modificationDate = info.modificationDate
        return copy
    }
}

/// The advisory lock a save holds.
enum HostLock {
    /// How long a save waits for another program's lock before giving up.
    static let patience: TimeInterval = 5

    /// Takes `flock(LOCK_EX)` on `descriptor`, waiting up to ``patience``.
    static func exclusive(_ descriptor: Descriptor, name: String) throws(CofferError) {
        let deadline = Date().addingTimeInterval(patience)
        while flock(descriptor.raw, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw CofferError.lastSystemError("flock", path: nil) }
            guard Date() < deadline else { throw CofferError(.unsupported, detail: "host-file-locked") }
            usleep(20_000)
        }
    }
}

/// The steps of a host save, each leaving nothing behind when it fails.
enum HostRewrite {
    /// Writes `bytes` to a new hidden file in `folder` with `original`'s mode, owner,
    /// extended attributes and ACL, durable before it returns.
    static func writeCopy(_ bytes: [UInt8], like original: HostItem, in folder: HostItem,
                          name: String) throws(CofferError) -> (name: String, info: coffer_stat) {
        let temporary = PartialName.make()
        let fd = openat(folder.descriptor.raw, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: nil).naming(hostFile: name) }
        let file = Descriptor(fd)
        do throws(CofferError) {
            try writeAll(bytes, to: file.raw, name: name)
            try copyAttributes(from: original.descriptor.raw, to: file.raw, name: name)
            guard fsync(file.raw) == 0 else { throw CofferError.lastSystemError("fsync", path: nil).naming(hostFile: name) }
            var info = coffer_stat()
            guard coffer_fstat(file.raw, &info) == 0 else { throw CofferError.lastSystemError("fstat", path: nil) }
            return (temporary, info)
        } catch {
            _ = unlinkat(folder.descriptor.raw, temporary, 0)
            throw error
        }
    }

    /// Puts `temporary` in the place of `fileName` and the old file in the desktop trash, and
    /// returns its ID there. The two are swapped in one step (`RENAME_EXCHANGE`: a reader sees
    /// the old file or the new one, never neither), then the old one, now under the temporary
    /// name, is trashed under its own; if that fails they are swapped back and nothing has
    /// changed. Where the file system cannot swap, the old file is trashed first and the new
    /// one renamed in after.
    /// `holdsOldContent` is set when the swap back failed and the temporary name holds the old
    /// file (never removed then).
    static func swapIn(_ temporary: String, for fileName: String, in folder: HostItem, trash: HostTrash,
                       name: String, holdsOldContent: inout Bool) throws(CofferError) -> String {
        let swapped = coffer_renameat2(folder.descriptor.raw, temporary, folder.descriptor.raw, fileName,
                                       UInt32(COFFER_RENAME_EXCHANGE)) == 0
        guard swapped else {
            guard errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP else {
                throw CofferError.lastSystemError("renameat2", path: nil).naming(hostFile: name)
            }
            let (_, id) = try trash.put(fileName, in: folder)
            do throws(CofferError) {
                try Placement.place(temporary, as: fileName, in: folder.descriptor, conflict: .fail, path: .root())
            } catch {
                throw CofferError(error.kind, detail: name, errno: error.errno)
            }
            return id
        }
        do throws(CofferError) {
            return try trash.put(fileName, entry: temporary, in: folder).id
        } catch {
            // Back as it was: the old file in its place, the new content under the temporary name.
            if coffer_renameat2(folder.descriptor.raw, temporary, folder.descriptor.raw, fileName,
                                UInt32(COFFER_RENAME_EXCHANGE)) != 0 {
                holdsOldContent = true
            }
            throw error
        }
    }

    /// Puts a copy of the file's content as it is now in the desktop trash, under its name.
    static func keepCopy(of item: HostItem, named fileName: String, in folder: HostItem,
                         trash: HostTrash) throws(CofferError) -> String {
        let temporary = PartialName.make()
        let fd = openat(folder.descriptor.raw, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: nil).naming(hostFile: item.name) }
        let copy = Descriptor(fd)
        do throws(CofferError) {
            var offset: Int64 = 0
            while true {
                let chunk = try item.descriptor.read(at: offset, length: 1 << 20)
                if chunk.isEmpty { break }
                try writeAll(chunk, to: copy.raw, name: item.name)
                offset += Int64(chunk.count)
            }
            try copyAttributes(from: item.descriptor.raw, to: copy.raw, name: item.name)
            guard fsync(copy.raw) == 0 else { throw CofferError.lastSystemError("fsync", path: nil).naming(hostFile: item.name) }
            return try trash.put(fileName, entry: temporary, in: folder).id
        } catch {
            _ = unlinkat(folder.descriptor.raw, temporary, 0)
            throw error
        }
    }

    /// Writes `bytes` over the file `fileName` in `folder` (which must still be the file
    /// `expected` describes), shortens it to their length and makes it durable.
    static func rewrite(_ fileName: String, in folder: HostItem, expecting expected: coffer_stat,
                        with bytes: [UInt8], name: String) throws(CofferError) -> coffer_stat {
        let fd = openat(folder.descriptor.raw, fileName, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: nil).naming(hostFile: name) }
        let file = Descriptor(fd)
        var info = coffer_stat()
        guard coffer_fstat(file.raw, &info) == 0, info.inode == expected.inode, info.device == expected.device,
              info.version == expected.version
        else { throw CofferError.changedSinceRead(hostFileNamed: name, modified: info.modificationDate) }
        try writeAll(bytes, to: file.raw, name: name)
        guard ftruncate(file.raw, off_t(bytes.count)) == 0, fsync(file.raw) == 0 else {
            throw CofferError.lastSystemError("ftruncate", path: nil).naming(hostFile: name)
        }
        guard coffer_fstat(file.raw, &info) == 0 else { throw CofferError.lastSystemError("fstat", path: nil) }
        return info
    }

    /// Writes `bytes` at the file's position (each file here is written from its start, in
    /// order), through the writers' one loop; a failure names the host file.
    static func writeAll(_ bytes: [UInt8], to fd: Int32, name: String) throws(CofferError) {
        do {
            try WriteAll.bytes(bytes, to: fd, path: nil)
        } catch {
            throw error.naming(hostFile: name)
        }
    }

    /// Gives `target` the mode, owner and extended attributes (the ACL among them) of
    /// `source`. The owner is kept where the account may set it (its own files; a group it
    /// is in); an attribute of the `user.` or `system.` namespaces that cannot be copied
    /// fails the save rather than dropping it.
    static func copyAttributes(from source: Int32, to target: Int32, name: String) throws(CofferError) {
        var info = stat()
        guard fstat(source, &info) == 0 else { throw CofferError.lastSystemError("fstat", path: nil) }
        if fchown(target, info.st_uid, info.st_gid) != 0 { _ = fchown(target, uid_t.max, info.st_gid) }
        guard fchmod(target, info.st_mode & 0o7777) == 0 else {
            throw CofferError.lastSystemError("fchmod", path: nil).naming(hostFile: name)
        }
        for attribute in ExtendedAttributes.names(of: source) {
            guard let value = ExtendedAttributes.value(of: attribute, fd: source) else { continue }
            if ExtendedAttributes.set(attribute, to: value, fd: target) != 0
                && (attribute.hasPrefix("user.") || attribute.hasPrefix("system.")) {
                throw CofferError.lastSystemError("fsetxattr", path: nil).naming(hostFile: name)
            }
        }
    }
}

extension CofferError {
    /// This error about a host file, named by its last component (host errors carry no
    /// virtual path).
    func naming(hostFile name: String) -> CofferError {
        var named = self
        if named.detail == nil { named.detail = name }
        return named
    }
}
