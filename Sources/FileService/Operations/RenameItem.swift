public import CofferCore

/// Gives an item a new name in its folder. The new name is a name, not a path.
///
/// Default: a name already taken makes it fail. The audit entry names the item and its
/// new path (when the new name is a valid one).
///
/// Fails with `invalidName` for a new name that is no name (empty, `.`, `..`, holding a `/`
/// or NUL, or longer than 255 bytes), `noSuchFile` when the item is missing, `invalidOperation` for a
/// mount's root, `readOnly` on a read-only mount, and `fileExists` for a taken name under
/// `fail` (or `ask` with no one to ask).
public struct RenameItem: FileOperation {
    public static let name = "rename"
    public static let changesFiles = true
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictChoice = .fail

    /// The item renamed.
    public var path: VirtualPath
    /// Its new name in the same folder.
    public var newName: String
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictChoice?

    /// Renames the item at `path` to `newName`.
    public init(_ path: VirtualPath, to newName: String, conflict: ConflictChoice? = nil) {
        self.path = path
        self.newName = newName
        self.conflict = conflict
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try FileName.validate(newName, path: path)
        let target = try path.replacingName(with: newName)
        let service = context.service
        let original = try await service.stat(path)
        let renamed = try await context.settling(context.conflict(conflict, for: Self.self, otherwise: Self.defaultConflict), about: target) { policy, _ throws(CofferError) in
            try await service.rename(path, to: newName, conflict: policy)
        }
        return await service.placedNode(renamed, made: original)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        let renamed = (try? outcome.get())?.path ?? (try? path.replacingName(with: newName))
        return [path.description] + (renamed.map { [$0.description] } ?? [])
    }
}
