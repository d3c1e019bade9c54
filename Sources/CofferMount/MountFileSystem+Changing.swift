import CCofferFUSE
import CofferCore
import FileService
import Foundation

/// Making, deleting, renaming and changing items: each one operation of the session, so
/// Coffer's meaning holds under POSIX calls (a deleted item goes to the trash, what a rename
/// replaces is kept as a version) and each is audited and undoable like any other front end's.
extension MountFileSystem {
    func mkdir(_ request: OpaquePointer, parent: UInt64, name: String) {
        let session = session
        let made = child(parent, name, changing: true).flatMap { path in
            clearHeldDeletion(at: path)
            return run { () async throws(CofferError) in try await session.perform(CreateFolder(path)) }
        }
        switch made {
        case .success(let node): replyEntry(request, node)
        case .failure(let error): reply(request, error)
        }
    }

    /// `ln -s`: a link that stays inside its mount (``CreateSymbolicLink``); one that would lead
    /// out is refused (`EACCES`), as reading one is.
    func symlink(_ request: OpaquePointer, target: String, parent: UInt64, name: String) {
        let session = session
        let made = child(parent, name, changing: true).flatMap { path in
            clearHeldDeletion(at: path)
            return run { () async throws(CofferError) in try await session.perform(CreateSymbolicLink(path, target: target)) }
        }
        switch made {
        case .success(let node): replyEntry(request, node)
        case .failure(let error): reply(request, error)
        }
    }

    /// `unlink` and `rmdir`: to the trash (a scratch file for good), after the checks POSIX
    /// makes (a folder must be empty to go by `rmdir`, and a file does not go by it). Held a
    /// moment first (``PendingDeletes``): a folder whose items were all just deleted goes to the
    /// trash with them, as one item.
    func remove(_ request: OpaquePointer, parent: UInt64, name: String, folder: Bool) {
        let session = session
        let pending = pending
        let checked = child(parent, name, changing: true).flatMap { path in
            sendOpenCopy(at: path).flatMap { node(at: path) }.flatMap { node in
                run { () async throws(CofferError) -> VirtualPath in
                    let isFolder = node.kind != .file && node.special == nil
                    if folder && !isFolder { throw CofferError(.notADirectory, path: path) }
                    if !folder && isFolder { throw CofferError(.isADirectory, path: path) }
                    if folder, !pending.holdsAll(try await session.perform(ListFolderEntries(path)).entries.map(\.name), in: path) {
                        throw CofferError(.directoryNotEmpty, path: path)
                    }
                    return path
                }
            }
        }
        switch checked {
        case .success(let path):
            // A program that still has it open writes to a deleted file from now on.
            for copy in openCopies() { copy.noteDeleted(at: path) }
            table.detach(path, withContents: folder)
            let full = pending.hold(path)
            coffer_fuse_reply_err(request, 0)
            if full { deletions.async { [self] in flushDeletions(all: true) } }
        case .failure(let error): reply(request, error)
        }
    }

    func rename(_ request: OpaquePointer, parent: UInt64, name: String, newParent: UInt64, newName: String, flags: UInt32) {
        // RENAME_EXCHANGE swaps two items: nothing in Coffer does that in one step.
        guard flags & ~UInt32(1) == 0 else { return coffer_fuse_reply_err(request, EINVAL).ignored }
        let session = session
        let noReplace = flags & 1 != 0   // RENAME_NOREPLACE
        let paths = child(parent, name, changing: true).flatMap { source in child(newParent, newName, changing: true).map { (source, $0) } }
        let moved = paths.flatMap { (source, target) -> Result<(FileNode, Bool), CofferError> in
            if pending.hides(source) { return .failure(CofferError(.noSuchFile, path: source)) }
            if case .failure(let error) = sendOpenCopy(at: source) { return .failure(error) }
            clearHeldDeletion(at: target)
            return run { () async throws(CofferError) -> (FileNode, Bool) in
                let node = try await session.perform(StatItem(source))
                if let there = try? await session.perform(StatItem(target)), !noReplace {
                    // POSIX replaces a file by a file, and a folder by a folder only when empty.
                    let folderThere = there.kind != .file && there.special == nil
                    let folderMoved = node.kind != .file && node.special == nil
                    if folderThere && !folderMoved { throw CofferError(.isADirectory, path: target) }
                    if !folderThere && folderMoved { throw CofferError(.notADirectory, path: target) }
                    if folderThere, try await !session.perform(ListFolderEntries(target)).entries.isEmpty {
                        throw CofferError(.directoryNotEmpty, path: target)
                    }
                }
                // The session's defaults (`mount`'s row) replace a taken name, keeping what was
                // there; RENAME_NOREPLACE fails instead.
                let conflict: ConflictChoice? = noReplace ? .policy(.fail) : nil
                let placed = try await session.perform(MoveItem(source, to: .exactly(target), conflict: conflict))
                return (placed, node.kind != .file)
            }
        }
        switch moved {
        case .success(let (placed, isFolder)):
            if case .success(let (source, target)) = paths {
                // Copies open of what was there are deleted files now; those of what moved go with it.
                for copy in openCopies() {
                    if placed.path == target && source != target { copy.noteDeleted(at: target) }
                    // The store may have made the object anew (an S3 copy has a new ETag): the copy
                    // takes it as what it sent, not as a change made elsewhere.
                    if copy.noteMoved(from: source, to: placed.path),
                       case .success(let node) = run({ () async throws(CofferError) in try await session.perform(StatItem(copy.destination)) }) {
                        copy.noteStored(as: node)
                    }
                }
                table.move(source, to: placed.path, withContents: isFolder)
                if isFolder { pending.move(source, to: placed.path) }
            }
            coffer_fuse_reply_err(request, 0)
        case .failure(let error): reply(request, error)
        }
    }

    func setattr(_ request: OpaquePointer, ino: UInt64, attributes given: UnsafePointer<stat>, toSet: Int32, fh: UInt64) {
        guard let path = table.path(ino) else {
            if case .mounts? = table.item(ino) { return coffer_fuse_reply_err(request, EROFS).ignored }
            return setOpenAttributes(request, ino: ino, attributes: given, toSet: toSet, fh: fh)
        }
        notifier.noteOwn(path)
        let session = session
        if toSet & Int32(COFFER_FUSE_SET_SIZE) != 0 {
            let size = Int64(given.pointee.st_size)
            if let failure = resize(path, ino: ino, to: size, fh: fh) { return reply(request, failure) }
        }
        if toSet & Int32(COFFER_FUSE_SET_MTIME | COFFER_FUSE_SET_MTIME_NOW) != 0 {
            let now = toSet & Int32(COFFER_FUSE_SET_MTIME_NOW) != 0
            let time = given.pointee.st_mtim
            // (A copy already sent takes no time: sending it again for a time would cost an
            // upload and a version; the time is not kept, as on a closed object.)
            if let copy = stagedWriter(of: ino, fh: fh), copy.hasUnsentChanges {
                // A copy of another storage's file takes the time, and carries it when sent.
                do throws(CofferError) { try copy.setModificationTime(now ? nil : (time.tv_sec, time.tv_nsec)) } catch { return reply(request, error) }
            } else {
                let date = now ? Date() : Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
                let touched = run { () async throws(CofferError) in try await session.perform(TouchItem(path, to: date)) }
                // Storage that keeps no time of its own choosing (an S3 object's is its upload's)
                // answers yes, as for a chmod.
                if case .failure(let error) = touched, !(error.kind == .unsupported && error.detail == "touch") {
                    return reply(request, error)
                }
            }
        }
        // Owners and permissions are the mounting user's and the storage's: a chmod or chown is
        // taken without changing them (as on a FAT or SMB mount), so copying programs go on.
        getattr(request, ino: ino, fh: fh)
    }

    /// Sends what a copy open of the file at `path` (a file of other storage) holds unsent, so
    /// that a rename or a delete that follows moves what the program wrote; a new file not yet
    /// sent is in the storage only then. A folder's copies are sent too, so that a rename of the
    /// folder moves them and an `rmdir` sees them.
    func sendOpenCopy(at path: VirtualPath) -> Result<Void, CofferError> {
        // (`send` waits for a send under way, then sends what came since, if anything.)
        for copy in openCopies() where path.contains(copy.destination) {
            if let failure = send(copy) { return .failure(failure) }
        }
        return .success(())
    }

    /// The copies on local disk open now (files of other storage), each once.
    func openCopies() -> [UpdatableFile] {
        var seen = Set<ObjectIdentifier>()
        return allHandles().compactMap(\.stagedCopy).filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    /// A copy of another storage's file open for writing as `fh`, or by any handle of `ino`.
    private func stagedWriter(of ino: UInt64, fh: UInt64) -> UpdatableFile? {
        (handle(fh).map { [$0] } ?? handles(of: ino)).firstValue { handle -> UpdatableFile? in
            if case .updating(let file)? = handle.current, file.isStaged { return file }
            return nil
        }
    }

    /// `setattr` of a file deleted (or replaced) while open: only what is open changes, in place
    /// (its content goes where the deleted file goes), through the handle given or any writing one.
    private func setOpenAttributes(_ request: OpaquePointer, ino: UInt64, attributes given: UnsafePointer<stat>, toSet: Int32,
                                   fh: UInt64) {
        let writers = (handle(fh).map { [$0] } ?? handles(of: ino)).compactMap { handle -> UpdatableFile? in
            if case .updating(let file)? = handle.current { return file }
            return nil
        }
        guard let file = writers.first else { return coffer_fuse_reply_err(request, ENOENT).ignored }
        do throws(CofferError) {
            if toSet & Int32(COFFER_FUSE_SET_SIZE) != 0 { try file.resize(to: Int64(given.pointee.st_size)) }
            if toSet & Int32(COFFER_FUSE_SET_MTIME | COFFER_FUSE_SET_MTIME_NOW) != 0 {
                let time = given.pointee.st_mtim
                try file.setModificationTime(toSet & Int32(COFFER_FUSE_SET_MTIME_NOW) != 0 ? nil : (time.tv_sec, time.tv_nsec))
            }
        } catch {
            return reply(request, error)
        }
        getattr(request, ino: ino, fh: fh)
    }

    /// Sets the size of the file at `path`. Emptying a file with content replaces it (what it
    /// held becomes a version) and the open handles writing it write to the new file; any other
    /// size is set in place. `nil` when done.
    private func resize(_ path: VirtualPath, ino: UInt64, to size: Int64, fh: UInt64) -> CofferError? {
        let session = session
        // A copy of another storage's file open for writing is resized itself, and its send
        // carries the size (the storage's object may not even be there yet).
        if let copy = stagedWriter(of: ino, fh: fh) {
            do throws(CofferError) { try copy.resize(to: size) } catch { return error }
            return nil
        }
        if size == 0 {
            let emptied = run { () async throws(CofferError) -> UpdatableFile? in
                let node = try await session.perform(StatItem(path))
                guard node.size > 0 else { return nil }
                return try await session.perform(OpenForUpdate(path, truncating: true))
            }
            switch emptied {
            case .failure(let error): return error
            case .success(nil): return nil
            case .success(let file?):
                // (A copy of another storage's file is sent emptied now.)
                if let failure = send(file) {
                    file.discard()
                    return failure
                }
                // Writers of this file go on in the new one; readers keep what they opened.
                for handle in handles(of: ino) {
                    // (A copy of another storage's file opened meanwhile sends itself: kept beside.)
                    guard case .updating(let writing)? = handle.current, !writing.isStaged else { continue }
                    if case .success(let reopened) = run({ () async throws(CofferError) in try await session.perform(OpenForUpdate(path)) }) {
                        handle.replace(with: .updating(reopened))
                    }
                }
                file.close()
                return nil
            }
        }
        if let handle = handle(fh), case .updating(let file)? = handle.current {
            do throws(CofferError) { try file.resize(to: size) } catch { return error }
            return nil
        }
        let current = (try? node(at: path).get())?.size ?? 0
        let resized = run(moving: max(current, size)) { () async throws(CofferError) in
            let file = try await session.perform(OpenForUpdate(path))
            do throws(CofferError) {
                try file.resize(to: size)
                if file.hasUnsentChanges { _ = try await session.perform(SaveUpdatedFile(file)) }
                file.close()
            } catch {
                file.discard()
                throw error
            }
        }
        if case .failure(let error) = resized { return error }
        return nil
    }

    func statfs(_ request: OpaquePointer, ino: UInt64) {
        let session = session
        let mount: String = if case .path(let path)? = table.item(ino) { path.mount } else { options.allMounts ? "" : options.mount }
        var stats = statvfs()
        stats.f_bsize = 4096
        stats.f_frsize = 4096
        stats.f_namemax = 255
        if !mount.isEmpty, case .success(let space) = run({ () async throws(CofferError) in try await session.perform(MeasureSpace(mount: mount)) }) {
            let total = UInt(max(0, space.totalBytes ?? space.usedBytes)) / 4096
            let available = UInt(max(0, space.availableBytes ?? 0)) / 4096
            stats.f_blocks = fsblkcnt_t(total)
            stats.f_bfree = fsblkcnt_t(available)
            stats.f_bavail = fsblkcnt_t(available)
        }
        coffer_fuse_reply_statfs(request, &stats)
    }
}
