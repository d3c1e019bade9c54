@_spi(Engine) public import CofferCore
import Foundation

/// Tags (`FileTags`): read, changed, and counted across a mount.
extension FileService {
    /// The tags of the item at `path`; none on a mount that keeps no tags.
    @_spi(Engine) public func tags(of path: VirtualPath) async throws(CofferError) -> [String] {
        guard let backend = try mount(for: path).backend as? any TaggingBackend else { return [] }
        return try await self.call(path) { try await backend.tags(at: path) }
    }

    /// Adds and removes tags of the item at `path`; returns its tags after.
    @_spi(Engine) public func changeTags(of path: VirtualPath, adding added: [String],
                            removing removed: [String]) async throws(CofferError) -> [String] {
        for tag in added + removed { try FileTags.check(tag) }
        guard let backend = try writableMount(for: path).backend as? any TaggingBackend else {
            throw CofferError(.unsupported, path: path, detail: "no-tags")
        }
        _ = try await stat(path)
        let (before, tags) = try await self.call(path) {
            let before = try await backend.tags(at: path)
            let tags = FileTags.changing(before, adding: added, removing: removed)
            try await backend.setTags(tags, at: path)
            return (before, tags)
        }
        if before != tags { ReplacedItems.current?.note(ChangeDraft(kind: .tag, path: path, tagsBefore: before, tagsAfter: tags)) }
        // A search by tag right after sees it, as it sees every change of Coffer's own.
        await indexChanged([path])
        return tags
    }

    /// Every tag in use below `folder`, with how many items carry it (hidden items and the
    /// insides of packages included: a tag is the user's whatever it is on).
    @_spi(Engine) public func tagCounts(below folder: VirtualPath) async throws(CofferError) -> [String: Int] {
        guard let backend = try mount(for: folder).backend as? any TaggingBackend else { return [:] }
        var counts: [String: Int] = [:]
        var pending = [folder]
        while let current = pending.popLast() {
            if Task.isCancelled { throw CofferError(.cancelled, path: current) }
            let entries: [FolderEntry]
            do { entries = try await backend.entries(inFolderAt: current) } catch { continue }
            for entry in entries where entry.kind != .special {
                let path = current.appending(trustedName: entry.name)
                if entry.kind == .folder { pending.append(path) }
                for tag in (try? await backend.tags(at: path)) ?? [] { counts[tag, default: 0] += 1 }
            }
        }
        return counts
    }
}
