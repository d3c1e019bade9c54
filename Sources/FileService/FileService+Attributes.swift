@_spi(Engine) public import CofferCore
import Foundation

/// Extended attributes (`user.…`) of items, read and changed one item at a time: what WebDAV
/// keeps its dead properties in, and what any program's tags and comments are.
extension FileService {
    /// The `user.` attributes of the item at `path`; none on a mount that keeps none.
    /// - Throws: `noSuchFile` when there is no such item.
    @_spi(Engine) public func userAttributes(of path: VirtualPath) async throws(CofferError) -> UserAttributes {
        guard let backend = try mount(for: path).backend as? any AttributeKeepingBackend else {
            _ = try await stat(path)
            return [:]
        }
        return try await self.call(path) { try await backend.userAttributes(at: path) }
    }

    /// The `user.` attributes of the items at `paths`, those with none left out: the items of
    /// one folder are read together (``AttributeKeepingBackend/userAttributes(ofItemsNamed:in:)``).
    @_spi(Engine) public func userAttributes(of paths: [VirtualPath]) async throws(CofferError) -> [VirtualPath: UserAttributes] {
        var found: [VirtualPath: UserAttributes] = [:]
        var byFolder: [VirtualPath: [VirtualPath]] = [:]
        for path in paths {
            guard let parent = path.parent else {
                // A mount's root, alone.
                if let attributes = try? await userAttributes(of: path), !attributes.isEmpty { found[path] = attributes }
                continue
            }
            byFolder[parent, default: []].append(path)
        }
        for (folder, items) in byFolder {
            if Task.isCancelled { throw CofferError(.cancelled) }
            guard let backend = try mount(for: folder).backend as? any AttributeKeepingBackend else { continue }
            let named = try await self.call(folder) { try await backend.userAttributes(ofItemsNamed: items.map(\.name), in: folder) }
            for item in items { if let attributes = named[item.name] { found[item] = attributes } }
        }
        return found
    }

    /// Sets `setting` and then takes away `removing` on the item at `path`; returns the
    /// attributes it could not keep (too large for the store, or a store without any).
    /// - Throws: `invalidArgument` for a name outside `user.`, or the tags' own name (tags change
    ///   through ``TagItems``); `unsupported` on a mount that keeps no attributes; `readOnly`.
    @_spi(Engine) public func changeUserAttributes(of path: VirtualPath, setting: UserAttributes,
                                                   removing: [String]) async throws(CofferError) -> [LostAttribute] {
        for name in Array(setting.keys) + removing {
            guard name.hasPrefix("user."), name.utf8.count > 5, name.utf8.count <= 255, !name.utf8.contains(0),
                  name != FileTags.attribute else {
                throw CofferError(.invalidArgument, path: path, detail: "not an attribute this can change: \(name)")
            }
        }
        guard let backend = try writableMount(for: path).backend as? any AttributeKeepingBackend else {
            throw CofferError(.unsupported, path: path, detail: "no-attributes")
        }
        _ = try await stat(path)
        return try await self.call(path) {
            // All or none: when one cannot be kept, or the removals fail, what was set is undone.
            let before = setting.isEmpty ? [:] : try await backend.userAttributes(at: path)
            let lost = setting.isEmpty ? [] : try await backend.setUserAttributes(setting, at: path)
            let lostNames = Set(lost.map(\.name))
            /// Those made take their room first, so the old values fit again; one that does not is an error.
            func undo() async throws {
                let changed = setting.keys.filter { !lostNames.contains($0) }
                let made = changed.filter { before[$0] == nil }
                if !made.isEmpty { try await backend.removeUserAttributes(made, at: path) }
                let restoring = before.filter { changed.contains($0.key) }
                let notRestored = restoring.isEmpty ? [] : try await backend.setUserAttributes(restoring, at: path)
                if !notRestored.isEmpty {
                    throw CofferError(.ioError, path: path, detail: "attributes could not be put back: \(notRestored.map(\.name).joined(separator: ", "))")
                }
            }
            guard lost.isEmpty else {
                try await undo()
                return lost
            }
            if !removing.isEmpty {
                do { try await backend.removeUserAttributes(removing, at: path) } catch {
                    try? await undo()
                    throw error
                }
            }
            return lost
        }
    }
}
