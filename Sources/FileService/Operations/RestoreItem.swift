public import CofferCore
import Foundation

/// Puts a trashed item back where it was, recreating missing parent folders.
///
/// The item is named by its id in the trash or, with ``Reference/name(_:)``, by that or by
/// its original name when only one item has it. Default: a place that is taken makes it
/// fail; `replace` moves what is in the way to the trash first (a restore never deletes).
/// The audit entry names `trash:/<id>` and where the item went.
///
/// Fails with `noSuchFile` when no item in the trash answers the reference,
/// `invalidArgument` when several items had the original name given, `fileExists` for a
/// taken place under `fail` (or `ask` with no one to ask), and `unsupported` on a service
/// without a trash.
public struct RestoreItem: FileOperation {
    public static let name = "restore"
    public static let changesFiles = true
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictChoice = .fail

    /// How the item to restore is named.
    public enum Reference: Sendable, Hashable {
        /// Its name in the trash (`files/<id>`).
        case id(String)
        /// Its name in the trash, else its original name when exactly one item had it.
        case name(String)
        /// Where it was: the item trashed from there most recently.
        case originalPath(VirtualPath)
    }

    /// The item to restore.
    public var item: Reference
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictChoice?

    /// Restores `item` to where it was.
    public init(_ item: Reference, conflict: ConflictChoice? = nil) {
        self.item = item
        self.conflict = conflict
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        let service = context.service
        let found = try await self.found(in: service, language: context.language)
        let restored = try await context.settling(context.conflict(conflict, for: Self.self, otherwise: Self.defaultConflict), about: found.originalPath) { policy, _ throws(CofferError) in
            try await service.restore(found.id, conflict: policy)
        }
        return try await service.stat(restored)
    }

    private func found(in service: FileService, language: Language) async throws(CofferError) -> TrashItem {
        switch item {
        case .id(let id):
            return try await service.trashItem(id)
        case .originalPath(let path):
            let items = try await service.trashItems().items
            guard let latest = items.filter({ $0.originalPath == path }).max(by: { ($0.deletionDate ?? .distantPast) < ($1.deletionDate ?? .distantPast) }) else {
                throw CofferError(.noSuchFile, path: path, detail: LocalizedText(
                    "nothing in the trash was deleted from there", "废纸篓中没有从那里删除的项目")(language))
            }
            return latest
        case .name(let name):
            // Its name in the trash, looked up directly: restoring many items by name must
            // not read the whole trash once per item.
            if FileService.isTrashID(name) {
                do throws(CofferError) {
                    return try await service.trashItem(name)
                } catch where error.kind == .noSuchFile {}
            }
            let items = try await service.trashItems().items
            let matches = items.filter { $0.originalPath.name == name }
            guard matches.count <= 1 else {
                let ids = matches.map { "“\($0.id)”" }.joined(separator: ", ")
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "several items in the trash were named “\(name)”: \(ids); restore one by its name in the trash",
                    "废纸篓中有多个项目原名为“\(name)”：\(ids)；请用其在废纸篓中的名称恢复")(language))
            }
            guard let only = matches.first else {
                // A name, never a path: “../x” is refused as a name before anything is looked up.
                var missing = VirtualPath.root(of: "trash")
                for part in FileService.isTrashID(name) ? name.split(separator: "/").map(String.init) : [name] {
                    missing = try missing.appending(part)
                }
                throw CofferError(.noSuchFile, path: missing)
            }
            return only
        }
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        let id = switch item {
        case .id(let id), .name(let id): "trash:/" + id
        case .originalPath(let path): path.description
        }
        return [id] + ((try? outcome.get()).map { [$0.path.description] } ?? [])
    }
}
