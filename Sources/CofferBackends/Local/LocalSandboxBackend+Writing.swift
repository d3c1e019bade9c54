import CCofferSystem
public import CofferCore
import CofferRuntime
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension LocalSandboxBackend {
    public func createFolder(at path: VirtualPath) async throws {
        try requireWritable(path)
        // A folder copy across backends is built under a partial name (``StreamingCopy``).
        if PartialName.isPartial(path.name) { notePartial(beside: path) }
        try await BlockingIO.run { _ throws(CofferError) in
            let parent = try self.openParent(of: path)
            guard mkdirat(parent.raw, path.name, 0o777) == 0 else {
                throw CofferError.lastSystemError("mkdirat", path: path)
            }
        }
    }

    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite {
        try requireWritable(path)
        notePartial(beside: path)
        // Inside a folder not yet placed, the folder's one flush makes this file durable too.
        let sync = syncBeforeCommit && !BatchedDurability.deferred
        return try await BlockingIO.run { _ throws(CofferError) in
            let parent = try self.openParent(of: path)
            return try LocalPendingWrite(folder: parent, finalName: path.name, path: path, sync: sync)
        }
    }

    /// A host file written at `path` whole, in one hand-over to a blocking thread (a folder
    /// import's files, thousands of them small): made, filled in the kernel with its `user.`
    /// attributes, given its permissions and time, and placed.
    func receive(_ source: Descriptor, reportingAs item: String, at path: VirtualPath, permissions: UInt16,
                 modificationDate: Date, conflict: ConflictPolicy, progress: ProgressReporter) async throws(CofferError) {
        try requireWritable(path)
        notePartial(beside: path)
        let sync = syncBeforeCommit && !BatchedDurability.deferred
        try await BlockingIO.run { cancellation throws(CofferError) in
            let write = try LocalPendingWrite(folder: try self.openParent(of: path), finalName: path.name, path: path, sync: sync)
            try write.completeNow(from: source, reportingAs: item, permissions: permissions, modificationDate: modificationDate,
                                  conflict: conflict, progress: progress, cancellation: cancellation)
        }
    }

    /// Host files written into `folder`, a folder being built under a partial name and made
    /// durable as one (``BatchedDurability``), in one hand-over for them all: each made at its
    /// own name (nobody sees the folder yet), filled in the kernel with its `user.` attributes,
    /// given its permissions and time. A file failing with an error of a kind in `skipping`
    /// is left out and returned, by its index; another error ends the batch.
    func receive(_ files: [ReceivedHostFile], into folder: VirtualPath, skipping: Set<CofferError.Kind>,
                 progress: ProgressReporter) async throws(CofferError) -> [(index: Int, error: CofferError)] {
        try requireWritable(folder)
        return try await BlockingIO.run { cancellation throws(CofferError) in
            let parent = try self.openFolder(at: folder)
            var skipped: [(index: Int, error: CofferError)] = []
            for (index, file) in files.enumerated() {
                try cancellation.check(folder)
                let path = try folder.appending(file.name)
                do throws(CofferError) {
                    let write = try LocalPendingWrite(folder: parent, finalName: file.name, path: path, sync: false, inPlace: true)
                    try write.completeNow(from: file.source, reportingAs: file.item, permissions: file.permissions,
                                          modificationDate: file.modificationDate, conflict: .fail, progress: progress,
                                          cancellation: cancellation)
                } catch where skipping.contains(error.kind) {
                    skipped.append((index, error))
                }
                progress.advance(items: 1)
            }
            return skipped
        }
    }

    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        try requireWritable(destination)
        let needsCopy = try await BlockingIO.run { _ throws(CofferError) -> Bool in
            let sourceFolder = try self.openParent(of: source)
            let destinationFolder = try self.openParent(of: destination)
            var info = coffer_stat()
            guard coffer_statx(sourceFolder.raw, source.name, &info) == 0 else {
                throw CofferError.lastSystemError("statx", path: source)
            }
            var existing = coffer_stat()
            if coffer_statx(destinationFolder.raw, destination.name, &existing) == 0,
               existing.inode == info.inode && existing.device == info.device {
                return false  // already there (same item under the same name)
            }
            do throws(CofferError) {
                try Placement.place(source.name, from: sourceFolder, as: destination.name, in: destinationFolder,
                                    conflict: conflict, path: destination)
                return false
            } catch where error.errno == EXDEV {
                return true  // another file system below the root: copy, then remove
            }
        }
        if needsCopy {
            try await copyItem(at: source, to: destination, conflict: conflict, progress: .none)
            try await removeItem(at: source)
        }
    }

    public func removeItem(at path: VirtualPath) async throws {
        try requireWritable(path)
        try await BlockingIO.run { _ throws(CofferError) in
            let parent = try self.openParent(of: path)
            try RemoveTree.remove(path.name, in: parent, path: path)
        }
    }

    /// Sets or clears backup exclusion on a file or folder (`user.xdg.robots.backup`).
    public func setExcludedFromBackup(_ excluded: Bool, at path: VirtualPath) async throws {
        try requireWritable(path)
        try await BlockingIO.run { _ throws(CofferError) in
            let parent = try self.openParent(of: path)
            let fd = openat(parent.raw, path.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
            let file = Descriptor(fd)
            let code = BackupExclusion.set(excluded, fd: file.raw)
            if code != 0 { throw CofferError.system(code, "fsetxattr", path: path) }
        }
    }

    /// Removes hidden partial items (`.coffer-partial-…`) directly in the folder at `path`
    /// last changed before `cutoff`: what a crash in the middle of a write leaves behind.
    /// Returns how many were removed.
    @discardableResult
    public func removeAbandonedPartials(in path: VirtualPath, olderThan cutoff: Date) async throws -> Int {
        try requireWritable(path)
        return try await BlockingIO.run { _ throws(CofferError) in
            let folder = try self.openFolder(at: path)
            var removed = 0
            for name in try folder.entryNames(reporting: path) where PartialName.isPartial(name) {
                var info = coffer_stat()
                guard coffer_statx(folder.raw, name, &info) == 0,
                      Double(info.mtime_sec) < cutoff.timeIntervalSince1970 else { continue }
                try RemoveTree.remove(name, in: folder, path: path)
                removed += 1
            }
            return removed
        }
    }
}

extension LocalSandboxBackend {
    /// Moves a file of `other` (another local tree: the service's downloads cache) to
    /// `destination` here by renaming it, when both are on one file system, as
    /// ``moveItem(at:to:conflict:)`` does within one backend: no copy, its attributes (a
    /// download's origin) kept, never overwriting unless `conflict` is `.replace`. Returns
    /// `false`, with nothing changed, when they are on different file systems or `other` is
    /// no local tree (then copy).
    public func adoptItem(from other: any StorageBackend, at source: VirtualPath, to destination: VirtualPath,
                          conflict: ConflictPolicy) async throws(CofferError) -> Bool {
        guard let other = other as? any DescriptorTree else { return false }
        try requireWritable(destination)
        return try await BlockingIO.run { _ throws(CofferError) -> Bool in
            let sourceFolder = try other.openParent(of: source)
            let destinationFolder = try self.openParent(of: destination)
            // Its data on disk before its name is: the cache does not sync what it writes.
            let fd = openat(sourceFolder.raw, source.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: destination) }
            let file = Descriptor(fd)
            guard fsync(file.raw) == 0 else { throw CofferError.lastSystemError("fsync", path: destination) }
            do throws(CofferError) {
                try Placement.place(source.name, from: sourceFolder, as: destination.name, in: destinationFolder,
                                    conflict: conflict, path: destination)
            } catch where error.errno == EXDEV {
                return false
            }
            // The new name is as durable as a committed write's.
            _ = fsync(destinationFolder.raw)
            return true
        }
    }
}

extension LocalSandboxBackend: TaggingBackend {
    public func tags(at path: VirtualPath) async throws -> [String] {
        try await BlockingIO.run { _ throws(CofferError) in
            let item = try self.openForAttributes(path)
            return withExtendedLifetime(item) { FileTags.parse(ExtendedAttributes.value(of: FileTags.attribute, fd: item.raw) ?? []) }
        }
    }

    public func setTags(_ tags: [String], at path: VirtualPath) async throws {
        try await BlockingIO.run { _ throws(CofferError) in
            let item = try self.openForAttributes(path)
            defer { withExtendedLifetime(item) {} }
            if tags.isEmpty {
                guard coffer_fremovexattr(item.raw, FileTags.attribute) == 0 || errno == ENODATA else {
                    throw CofferError.lastSystemError("fremovexattr", path: path)
                }
                return
            }
            let code = ExtendedAttributes.set(FileTags.attribute, to: FileTags.format(tags), fd: item.raw)
            guard code == 0 else {
                // A file system without user attributes cannot hold tags.
                if code == ENOTSUP || code == EOPNOTSUPP { throw CofferError(.unsupported, path: path, detail: "no-tags") }
                throw CofferError.system(code, "fsetxattr", path: path)
            }
        }
    }

    /// One open folder and one `getxattrat` per item (links are not followed: they carry none).
    public func tags(ofItems names: [String], inFolderAt folder: VirtualPath) async -> [[String]] {
        let read = try? await BlockingIO.run { _ throws(CofferError) -> [[String]] in
            let opened = try self.openFolder(at: folder)
            var buffer = [UInt8](repeating: 0, count: 4096)
            return withExtendedLifetime(opened) {
                names.map { name in
                    let count = buffer.withUnsafeMutableBytes {
                        coffer_getxattr_at(opened.raw, name, FileTags.attribute, $0.baseAddress, $0.count)
                    }
                    if count > 0 { return FileTags.parse(buffer[..<count]) }
                    // Longer than the buffer: read the usual way.
                    if count < 0 && errno == ERANGE,
                       let item = try? self.openForAttributes(folder.appending(trustedName: name)) {
                        return withExtendedLifetime(item) { FileTags.parse(ExtendedAttributes.value(of: FileTags.attribute, fd: item.raw) ?? []) }
                    }
                    return []
                }
            }
        }
        return read ?? names.map { _ in [] }
    }

    /// The item at `path` (a file or a folder, never followed through a link) open for its attributes.
    func openForAttributes(_ path: VirtualPath) throws(CofferError) -> Descriptor {
        if path.isRoot { throw CofferError(.invalidOperation, path: path) }
        let parent = try openParent(of: path)
        var info = coffer_stat()
        guard coffer_statx(parent.raw, path.name, &info) == 0 else { throw CofferError.lastSystemError("statx", path: path) }
        switch FileMode(info.mode) {
        case .regular, .directory: break
        default: throw CofferError(.unsupported, path: path)
        }
        let fd = openat(parent.raw, path.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
        return Descriptor(fd)
    }
}

extension LocalSandboxBackend: AttributeKeepingBackend {
    public func userAttributes(at path: VirtualPath) async throws -> UserAttributes {
        try await BlockingIO.run { _ throws(CofferError) in
            let item = try self.openForAttributes(path)
            return withExtendedLifetime(item) { ExtendedAttributes.userAttributes(of: item.raw) }
        }
    }

    /// Opens the folder once, and each item in it by name (files and folders only, never
    /// following a link).
    public func userAttributes(ofItemsNamed names: [String], in folder: VirtualPath) async throws -> [String: UserAttributes] {
        try await BlockingIO.run { _ throws(CofferError) in
            let parent = try self.openFolder(at: folder)
            return withExtendedLifetime(parent) {
                var found: [String: UserAttributes] = [:]
                // Names only, never a path: one with a slash, `.` or `..` is passed over.
                for name in names where !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/")) {
                    var info = coffer_stat()
                    guard coffer_statx(parent.raw, name, &info) == 0 else { continue }
                    switch FileMode(info.mode) {
                    case .regular, .directory: break
                    default: continue
                    }
                    let fd = openat(parent.raw, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
                    guard fd >= 0 else { continue }
                    let attributes = ExtendedAttributes.userAttributes(of: fd)
                    close(fd)
                    if !attributes.isEmpty { found[name] = attributes }
                }
                return found
            }
        }
    }

    public func setUserAttributes(_ attributes: UserAttributes, at path: VirtualPath) async throws -> [LostAttribute] {
        try requireWritable(path)
        return try await BlockingIO.run { _ throws(CofferError) in
            let item = try self.openForAttributes(path)
            return withExtendedLifetime(item) { ExtendedAttributes.setUserAttributes(attributes, on: item.raw) }
        }
    }

    public func removeUserAttributes(_ names: [String], at path: VirtualPath) async throws {
        try requireWritable(path)
        try await BlockingIO.run { _ throws(CofferError) in
            let item = try self.openForAttributes(path)
            try withExtendedLifetime(item) { () throws(CofferError) in
                for name in names where coffer_fremovexattr(item.raw, name) != 0 && errno != ENODATA {
                    throw CofferError.lastSystemError("fremovexattr", path: path)
                }
            }
        }
    }
}

extension LocalSandboxBackend: DurableFolderBackend {
    /// One `syncfs` of the file system the folder is on: every file written below it, at once.
    public func makeDurable(_ path: VirtualPath) async throws {
        guard syncBeforeCommit else { return }
        try await BlockingIO.run { _ throws(CofferError) in
            let folder = try self.openFolder(at: path)
            guard coffer_syncfs(folder.raw) == 0 else { throw CofferError.lastSystemError("syncfs", path: path) }
        }
    }
}
