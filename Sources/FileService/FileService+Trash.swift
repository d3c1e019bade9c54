import CofferBackends
@_spi(Engine) public import CofferCore
public import Foundation

extension FileService {
    /// Moves an item to the trash. Nothing is deleted: ``restore(_:conflict:)`` puts it back.
    @discardableResult
    @_spi(Engine) public func trash(_ path: VirtualPath) async throws(CofferError) -> TrashItem {
        try await trash([path])[0].get()
    }

    /// Moves several items to the trash in one pass (much faster than one at a time for
    /// many items). Each gets its own result; a failure does not stop the others.
    @_spi(Engine) public func trash(_ paths: [VirtualPath]) async -> [Result<TrashItem, CofferError>] {
        var results = [Result<TrashItem, CofferError>](repeating: .failure(CofferError(.cancelled)), count: paths.count)
        var index = 0
        while index < paths.count {
            // A run of paths on the same mount goes to the trash together.
            var end = index + 1
            while end < paths.count && paths[end].mount == paths[index].mount { end += 1 }
            do throws(CofferError) {
                let mount = try writableMount(for: paths[index])
                let batch = Array(paths[index..<end])
                if let keeping = mount.backend as? any TrashKeepingBackend {
                    for (offset, result) in await keeping.trash(batch).enumerated() {
                        results[index + offset] = result.map { Self.qualified($0, mount: mount.name) }
                    }
                } else {
                    let trash = try requireTrash(paths[index])
                    guard mount.name != trash.mountName else { throw CofferError(.invalidOperation, path: paths[index]) }
                    for (offset, result) in await trash.put(batch, from: mount.backend).enumerated() {
                        results[index + offset] = result
                    }
                }
            } catch {
                for position in index..<end { results[position] = .failure(CofferError.wrapping(error, path: paths[position])) }
            }
            index = end
        }
        await indexChanged(zip(paths, results).compactMap { path, result in (try? result.get()) == nil ? nil : path })
        let store = feature(VersionStore.self)
        for (path, result) in zip(paths, results) {
            guard case .success(let item) = result else { continue }
            await store?.itemTrashed(path, as: item.id)
            ReplacedItems.current?.note(ChangeDraft(kind: .trash, path: path, trashID: item.id))
        }
        return results
    }

    /// Everything in the trash, oldest first: the container's, and the trash each mount
    /// that keeps its own holds (its items named `MOUNT/ID`).
    @_spi(Engine) public func trashItems() async throws(CofferError) -> TrashListing {
        var (items, problems) = keepingMounts.isEmpty || trashBackend != nil ? try await requireTrash(nil).items() : ([], [])
        for (name, keeping) in keepingMounts {
            let listing = try await call(VirtualPath.root(of: name)) { try await keeping.trashListing(mount: name) }
            items += listing.items.map { Self.qualified($0, mount: name) }
            problems += listing.problems.map { TrashProblem(id: name + "/" + $0.id, reason: $0.reason) }
        }
        if !keepingMounts.isEmpty {
            items.sort { ($0.deletionDate ?? .distantPast, $0.id) < ($1.deletionDate ?? .distantPast, $1.id) }
        }
        return TrashListing(items: items, problems: problems)
    }

    /// The trashed item `id`.
    @_spi(Engine) public func trashItem(_ id: String) async throws(CofferError) -> TrashItem {
        if let (name, keeping, own) = try keepingMount(of: id) {
            return Self.qualified(try await keeping.trashedItem(own, mount: name), mount: name)
        }
        return try await requireTrash(nil).item(id)
    }

    /// Puts the trashed item `id` back where it was, recreating missing parent folders.
    ///
    /// With `.fail` an item now at that place wins and nothing changes;
    /// `.keepBoth` restores under a free name (`a (2).txt`); a replace first moves the
    /// item in the way to the trash — a restore never deletes anything.
    /// - Returns: where the item now is.
    @discardableResult
    @_spi(Engine) public func restore(_ id: String, conflict: ConflictPolicy) async throws(CofferError) -> VirtualPath {
        let item = try await trashItem(id)
        let target = item.originalPath
        let mount = try writableMount(for: target)
        if let parent = target.parent, !parent.isRoot {
            try await createFolder(at: parent, intermediates: true)
        }
        let arriving = Arrival(item.node, moved: true)
        let placed: VirtualPath
        if let (_, keeping, own) = try keepingMount(of: id) {
            placed = try await settle(target, conflict: conflict, arriving: arriving,
                                      journaling: ChangeDraft(kind: .restore, path: target, trashID: id)) { destination, _ in
                try await keeping.restoreTrashed(own, to: destination)
            }
        } else {
            let trash = try requireTrash(nil)
            placed = try await settle(target, conflict: conflict, arriving: arriving,
                                      journaling: ChangeDraft(kind: .restore, path: target, trashID: id)) { destination, policy in
                try await trash.restore(id, to: destination, in: mount.backend, conflict: policy)
            }
        }
        // Its versions come back with it.
        await feature(VersionStore.self)?.itemRestored(id, from: target, to: placed)
        return placed
    }

    /// Removes the versions of items no longer in the trash: emptying deletes them too.
    private func removeEmptiedVersions() async {
        guard let store = feature(VersionStore.self), let listing = try? await trashItems() else { return }
        await store.removeVersions(ofTrashItemsOtherThan: Set(listing.items.map(\.id)), in: self)
    }

    /// Deletes one trashed item for good, by its name in the container's trash, or `MOUNT/ID`
    /// in a mount's own.
    @_spi(Engine) public func deleteFromTrash(_ id: String) async throws(CofferError) {
        if let (name, keeping, own) = try keepingMount(of: id) {
            do {
                try await keeping.deleteTrashed(own)
                await feature(VersionStore.self)?.removeVersions(ofTrashItem: id, in: self)
                return
            } catch where error.kind == .noSuchFile {
                throw CofferError(.noSuchFile, path: Self.shownTrashPath(of: id, in: trashBackend?.mountName ?? "trash"))
            } catch {
                throw CofferError.wrapping(error, path: VirtualPath.root(of: name))
            }
        }
        try await requireTrash(nil).delete(id)
        await feature(VersionStore.self)?.removeVersions(ofTrashItem: id, in: self)
    }

    /// Deletes for good what was trashed before `cutoff` (everything when `nil`).
    /// This is the only operation in Coffer that deletes a user's file.
    /// - Returns: how many items were deleted.
    @discardableResult
    @_spi(Engine) public func emptyTrash(olderThan cutoff: Date? = nil, progress: ProgressReporter = .none) async throws(CofferError) -> Int {
        var emptied = keepingMounts.isEmpty || trashBackend != nil ? try await requireTrash(nil).empty(olderThan: cutoff, progress: progress) : 0
        for (name, keeping) in keepingMounts {
            emptied += try await call(VirtualPath.root(of: name)) { try await keeping.emptyTrash(mount: name, olderThan: cutoff) }
        }
        await removeEmptiedVersions()
        return emptied
    }

    /// The writable mounts that keep their own trash.
    private var keepingMounts: [(name: String, backend: any TrashKeepingBackend)] {
        mounts.compactMap { mount in
            guard mount.isWritable, let keeping = mount.backend as? any TrashKeepingBackend else { return nil }
            return (mount.name, keeping)
        }
    }

    /// For an item `MOUNT/ID` of a mount that keeps its own trash: the mount, its backend
    /// and the ID there; `nil` for an item of the container's trash (a name has no `/`).
    private func keepingMount(of id: String) throws(CofferError)
        -> (name: String, backend: any TrashKeepingBackend, id: String)? {
        guard let slash = id.firstIndex(of: "/") else { return nil }
        let name = String(id[..<slash])
        guard let keeping = keepingMounts.first(where: { $0.name == name }) else {
            throw CofferError(.noSuchFile, path: FileName.problem(with: name) == nil
                ? VirtualPath.root(of: trashBackend?.mountName ?? "trash").appending(trustedName: name) : nil)
        }
        return (name, keeping.backend, String(id[id.index(after: slash)...]))
    }

    /// The path an error names for the trash item `id` of the trash mounted as `trash`:
    /// `trash:/ID`, or `trash:/MOUNT∕ID` (a slash that looks like one but is no separator) for
    /// an item of a mount's own trash; `nil` when `id` can name no trash item.
    public static func shownTrashPath(of id: String, in trash: String = "trash") -> VirtualPath? {
        guard isTrashID(id) else { return nil }
        return VirtualPath.root(of: trash).appending(trustedName: id.replacingOccurrences(of: "/", with: "∕"))
    }

    /// Whether `text` can name an item of a trash: an ID of the container's trash (a file
    /// name) or `MOUNT/ID` of a mount's own.
    public static func isTrashID(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count <= 2 && parts.allSatisfy { FileName.problem(with: String($0)) == nil }
    }

    /// `item` as the service names it: `MOUNT/ID`.
    private static func qualified(_ item: TrashItem, mount: String) -> TrashItem {
        var item = item
        item.id = mount + "/" + item.id
        return item
    }

    private func requireTrash(_ path: VirtualPath?) throws(CofferError) -> TrashBackend {
        guard let trashBackend else { throw CofferError(.unsupported, path: path, detail: "no-trash") }
        return trashBackend
    }
}
