import CofferBackends
import CofferCore
import Foundation

extension FileService {
    /// Moves an item to the trash. Nothing is deleted: ``restore(_:conflict:)`` puts it back.
    @discardableResult
    public func trash(_ path: VirtualPath) async throws(CofferError) -> TrashItem {
        try await trash([path])[0].get()
    }

    /// Moves several items to the trash in one pass (much faster than one at a time for
    /// many items). Each gets its own result; a failure does not stop the others.
    public func trash(_ paths: [VirtualPath]) async -> [Result<TrashItem, CofferError>] {
        var results = [Result<TrashItem, CofferError>](repeating: .failure(CofferError(.cancelled)), count: paths.count)
        var index = 0
        while index < paths.count {
            // A run of paths on the same mount goes to the trash together.
            var end = index + 1
            while end < paths.count && paths[end].mount == paths[index].mount { end += 1 }
            do throws(CofferError) {
                let trash = try requireTrash(paths[index])
                let mount = try writableMount(for: paths[index])
                guard mount.name != trash.mountName else { throw CofferError(.invalidOperation, path: paths[index]) }
                let batch = Array(paths[index..<end])
                for (offset, result) in await trash.put(batch, from: mount.backend).enumerated() {
                    results[index + offset] = result
                }
            } catch {
                for position in index..<end { results[position] = .failure(CofferError.wrapping(error, path: paths[position])) }
            }
            index = end
        }
        await indexChanged(zip(paths, results).compactMap { path, result in (try? result.get()) == nil ? nil : path })
        return results
    }

    /// Everything in the trash, oldest first.
    public func trashItems() async throws(CofferError) -> TrashListing {
        let (items, problems) = try await requireTrash(nil).items()
        return TrashListing(items: items, problems: problems)
    }

    /// The trashed item `id`.
    public func trashItem(_ id: String) async throws(CofferError) -> TrashItem {
        try await requireTrash(nil).item(id)
    }

    /// Puts the trashed item `id` back where it was, recreating missing parent folders.
    ///
    /// With `.fail` an item now at that place wins and nothing changes;
    /// `.keepBoth` restores under a free name (`a (2).txt`); `.replace` first moves the
    /// item in the way to the trash — a restore never deletes anything.
    /// - Returns: where the item now is.
    @discardableResult
    public func restore(_ id: String, conflict: ConflictPolicy) async throws(CofferError) -> VirtualPath {
        let trash = try requireTrash(nil)
        let item = try await trash.item(id)
        let target = item.originalPath
        let mount = try writableMount(for: target)
        if let parent = target.parent, !parent.isRoot {
            try await createFolder(at: parent, intermediates: true)
        }
        if conflict == .replace, try await exists(target) {
            try await self.trash(target)
        }
        return try await settle(target, conflict: conflict == .keepBoth ? .keepBoth : .fail) { destination, policy in
            try await trash.restore(id, to: destination, in: mount.backend, conflict: policy)
        }
    }

    /// Deletes for good what was trashed before `cutoff` (everything when `nil`).
    /// This is the only operation in Coffer that deletes a user's file.
    /// - Returns: how many items were deleted.
    @discardableResult
    public func emptyTrash(olderThan cutoff: Date? = nil) async throws(CofferError) -> Int {
        try await requireTrash(nil).empty(olderThan: cutoff)
    }

    private nonisolated func requireTrash(_ path: VirtualPath?) throws(CofferError) -> TrashBackend {
        guard let trashBackend else { throw CofferError(.unsupported, path: path, detail: "no-trash") }
        return trashBackend
    }
}
