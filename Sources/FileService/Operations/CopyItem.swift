public import CofferCore

/// Copies an item, across mounts if needed. The copy appears only when complete.
///
/// Defaults: keep both names (`report (2).pdf`) when the name is taken; folders copied
/// whole. The audit entry names the source and where the copy landed (or, when it failed,
/// the destination as named).
///
/// Fails with `noSuchFile` when the source is missing, `readOnly` when the destination's
/// mount is read-only, `invalidOperation` for a mount's root or a folder copied into
/// itself, `isADirectory` for a folder when ``copiesFolders`` is `false`, and `fileExists`
/// for a taken name under `fail` (or `ask` with no one to ask). A cancelled copy leaves
/// nothing behind.
public struct CopyItem: FileOperation {
    public static let name = "copy"
    public static let changesFiles = true
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictChoice = .keepBoth

    /// The item copied.
    public var source: VirtualPath
    /// Where the copy lands.
    public var destination: Destination
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictChoice?
    /// Whether a folder may be copied; `false` refuses one with `isADirectory` (`cp` without `-r`).
    public var copiesFolders: Bool

    /// Copies `source` to `destination`.
    public init(_ source: VirtualPath, to destination: Destination, conflict: ConflictChoice? = nil,
                copiesFolders: Bool = true) {
        self.source = source
        self.destination = destination
        self.conflict = conflict
        self.copiesFolders = copiesFolders
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        let service = context.service
        let target = try await destination.resolve(for: source, in: service)
        let original = try await service.stat(source)
        if !copiesFolders, original.kind != .file { throw CofferError(.isADirectory, path: source) }
        let placed = try await context.settling(context.conflict(conflict, for: Self.self, otherwise: Self.defaultConflict), about: target) { policy, progress throws(CofferError) in
            try await service.copy(source, to: target, conflict: policy, progress: progress)
        }
        return await service.placedNode(placed, made: original)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        destination.auditedPaths(from: source, outcome)
    }
}
