@_spi(Engine) public import CofferCore

extension FileService {
    /// The entries of the folder at `path` (``ListFolderEntries``): names alone where the
    /// backend reads items by name cheaply, else the items whole.
    @_spi(Engine) public func entries(inFolder path: VirtualPath) async throws(CofferError) -> FolderListing {
        let backend = try mount(for: path).backend
        guard backend.readsItemsByNameCheaply else {
            let nodes = try await self.call(path) { try await backend.contentsOfFolder(at: path) }
            return FolderListing(entries: nodes.map { FolderEntry(name: $0.name, kind: FolderEntry.Kind(of: $0), isHidden: $0.isHidden) },
                                 nodes: nodes)
        }
        return FolderListing(entries: try await self.call(path) { try await backend.entries(inFolderAt: path) })
    }

    /// The items at `paths`, `nil` for one that cannot be read (``StatItems``); each mount's
    /// are read together.
    @_spi(Engine) public func nodes(at paths: [VirtualPath]) async throws(CofferError) -> [FileNode?] {
        var found = [FileNode?](repeating: nil, count: paths.count)
        var byMount: [String: [Int]] = [:]
        for (index, path) in paths.enumerated() { byMount[path.mount, default: []].append(index) }
        for indices in byMount.values {
            if Task.isCancelled { throw CofferError(.cancelled) }
            let backend = try mount(for: paths[indices[0]]).backend
            let nodes = await backend.nodes(at: indices.map { paths[$0] })
            for (index, node) in zip(indices, nodes) { found[index] = node }
        }
        return found
    }
}
