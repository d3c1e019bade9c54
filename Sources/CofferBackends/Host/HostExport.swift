import CofferCore
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
    /// (`report (2).pdf`), with `.replace` an existing item is swapped out atomically. A
    /// failed or cancelled copy leaves nothing in the host folder.
    public func deliver(_ item: VirtualPath, to folder: HostItem, conflict: ConflictPolicy,
                        progress: ProgressReporter) async throws(CofferError) -> String {
        guard folder.isFolder else { throw CofferError(.notADirectory, detail: folder.name) }
        local.journal?.notePartials(inFolder: [], below: folder.path)
        return try await BlockingIO.run { cancellation throws(CofferError) in
            let stage = try self.local.openParent(of: item)
            let copier = TreeCopier(cancellation: cancellation, progress: progress, path: item, source: item, flush: false)
            let temporary = PartialName.make()
            do throws(CofferError) {
                try copier.copyEntry(item.name, from: stage, to: temporary, in: folder.descriptor)
                try cancellation.check(item)
                let name = try Self.place(temporary, as: item.name, in: folder.descriptor, conflict: conflict, path: item)
                return folder.path == "/" ? "/" + name : folder.path + "/" + name
            } catch {
                try? RemoveTree.remove(temporary, in: folder.descriptor, path: item)
                throw error
            }
        }
    }

    /// Renames `temporary` to `name` or, for keep-both, to the first free variant of it.
    private static func place(_ temporary: String, as name: String, in folder: Descriptor, conflict: ConflictPolicy,
                              path: VirtualPath) throws(CofferError) -> String {
        guard conflict == .keepBoth else {
            try Placement.place(temporary, as: name, in: folder, conflict: conflict, path: path)
            return name
        }
        let placed = try UniqueName.claim(name) { candidate throws(CofferError) -> String? in
            do throws(CofferError) {
                try Placement.place(temporary, as: candidate, in: folder, conflict: .fail, path: path)
                return candidate
            } catch where error.kind == .fileExists {
                return nil
            }
        }
        guard let placed else { throw CofferError(.fileExists, path: path) }
        return placed
    }
}
