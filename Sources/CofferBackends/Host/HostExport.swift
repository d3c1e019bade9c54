import CCofferSystem
public import CofferCore
#if canImport(Glibc)
import CofferRuntime
import Glibc
#endif

extension ExportStagingBackend {
    /// Copies an item out of a stage into a host folder and returns the host path written
    /// (seed 000 §5.6: exporting is a copy, never a move).
    ///
    /// The copy is built under a hidden temporary name in the host folder and renamed into
    /// place with `RENAME_NOREPLACE`; with `.keepBoth` the first free name is taken
    /// (`report (2).pdf`); a replace moves the existing host item to the user's desktop
    /// trash (``HostTrash``) once the copy is complete, and puts the copy in its place — a
    /// folder only in a folder's place, and a file in a file's, unless `.replaceFolder`. A
    /// failed or cancelled copy leaves nothing in the host folder.
    /// Faults reading the item name `original`, the item exported; faults writing into the
    /// host folder, and attributes it cannot keep, name the host item (`host:/FOLDER/NAME`, or
    /// `host:/FOLDER` when the folder itself refuses): the folder that cannot be written, the
    /// folder in a file's way, are the user's, not Coffer's.
    /// - Returns: the host path written, and the ID in the desktop trash of what it replaced.
    public func deliver(_ item: VirtualPath, exporting original: VirtualPath, to folder: HostItem, conflict: ConflictPolicy,
                        trash: HostTrash, progress: ProgressReporter) async throws(CofferError) -> (path: String, trashed: String?) {
        let hostFolder = HostAccess.shownPath(folder.path)
        guard folder.isFolder else { throw CofferError(.notADirectory, path: hostFolder) }
        let target = hostFolder.flatMap { try? $0.appending(item.name) }
        local.journal?.notePartials(inFolder: [], below: folder.path)
        return try await BlockingIO.run { cancellation throws(CofferError) in
            let stage = try self.local.openParent(of: item)
            let copier = TreeCopier(cancellation: cancellation, progress: progress, path: target ?? item, source: original,
                                    flush: false)
            let temporary = PartialName.make()
            do throws(CofferError) {
                do throws(CofferError) {
                    try copier.copyEntry(item.name, from: stage, to: temporary, in: folder.descriptor)
                } catch where error.path == target && folder.stillThere && [.noSuchFile, .noPermission].contains(error.kind) {
                    // What refuses a new name is the folder: one the user may not write in, or
                    // one whose contents the system makes (`/proc`, `/sys`), where a new name
                    // "does not exist".
                    throw error.kind == .noPermission ? CofferError(.noPermission, path: hostFolder, errno: error.errno)
                        : CofferError(.readOnly, path: hostFolder, detail: CofferError.takesNoFiles)
                }
                try cancellation.check(item)
                let (name, trashed) = try Self.place(temporary, as: item.name, in: folder, conflict: conflict,
                                                     trash: trash, path: target ?? item)
                return (folder.path == "/" ? "/" + name : folder.path + "/" + name, trashed)
            } catch {
                try? RemoveTree.remove(temporary, in: folder.descriptor, path: item)
                throw error
            }
        }
    }

    /// Renames `temporary` to `name` or, for keep-both, to the first free variant of it;
    /// for a replace, first moves what holds `name` to the desktop trash.
    private static func place(_ temporary: String, as name: String, in folder: HostItem, conflict: ConflictPolicy,
                              trash: HostTrash, path: VirtualPath) throws(CofferError) -> (String, trashed: String?) {
        let descriptor = folder.descriptor
        switch conflict {
        case .fail:
            try Placement.place(temporary, as: name, in: descriptor, conflict: .fail, path: path)
            return (name, nil)
        case .replace, .replaceFolder:
            // Another program may take the name between the look and the rename: look again.
            for _ in 0..<3 {
                var existing = coffer_stat()
                guard coffer_statx(descriptor.raw, name, &existing) == 0 else {
                    do throws(CofferError) {
                        try Placement.place(temporary, as: name, in: descriptor, conflict: .fail, path: path)
                        return (name, nil)
                    } catch where error.kind == .fileExists {
                        continue
                    }
                }
                var arriving = coffer_stat()
                guard coffer_statx(descriptor.raw, temporary, &arriving) == 0 else {
                    throw CofferError.lastSystemError("statx", path: path)
                }
                try conflict.checkReplacing(folder: FileMode(existing.mode) == .directory,
                                            with: FileMode(arriving.mode) == .directory, at: path)
                let (_, id) = try trash.put(name, in: folder)
                try Placement.place(temporary, as: name, in: descriptor, conflict: .fail, path: path)
                return (name, id)
            }
            throw CofferError(.fileExists, path: path)
        case .keepBoth:
            let placed = try UniqueName.claim(name) { candidate throws(CofferError) -> String? in
                do throws(CofferError) {
                    try Placement.place(temporary, as: candidate, in: descriptor, conflict: .fail, path: path)
                    return candidate
                } catch where error.kind == .fileExists {
                    return nil
                }
            }
            guard let placed else { throw CofferError(.fileExists, path: path) }
            return (placed, nil)
        }
    }
}

extension ExportStagingBackend {
    /// Copies an item of a local mount into a stage as its own files do when copied: in the
    /// kernel, with their `user.` attributes (tags, comments, the backup flag), never
    /// following a link. Any other mount's items go through ``StreamingCopy``.
    public func stage(_ item: VirtualPath, of source: any StorageBackend, at staged: VirtualPath,
                      progress: ProgressReporter) async throws(CofferError) -> Bool {
        guard let source = source as? any DescriptorTree else { return false }
        try await BlockingIO.run { cancellation throws(CofferError) in
            let from = try source.openParent(of: item)
            let into = try self.local.openParent(of: staged)
            let copier = TreeCopier(cancellation: cancellation, progress: progress, path: staged, source: item, flush: false)
            do throws(CofferError) {
                try copier.copyEntry(item.name, from: from, to: staged.name, in: into)
            } catch {
                try? RemoveTree.remove(staged.name, in: into, path: staged)
                throw error
            }
        }
        return true
    }
}
