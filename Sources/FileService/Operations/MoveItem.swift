public import CofferCore

/// Moves an item, across mounts if needed (a copy, then the source is removed once the copy
/// is in place).
///
/// Default: a name already taken makes it fail; nothing is overwritten unless asked. The
/// audit entry names the source and where the item landed (or the destination as named).
///
/// Fails with `noSuchFile` when the source is missing, `readOnly` when either mount is
/// read-only, `invalidOperation` for a mount's root or a folder moved into itself, and
/// `fileExists` for a taken name under `fail` (or `ask` with no one to ask). A cancelled
/// move across mounts leaves the source whole and nothing at the destination.
public struct MoveItem: FileOperation {
    public static let name = "move"
    public static let changesFiles = true
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictChoice = .fail

    /// The item moved.
    public var source: VirtualPath
    /// Where it lands.
    public var destination: Destination
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictChoice?

    /// Moves `source` to `destination`.
    public init(_ source: VirtualPath, to destination: Destination, conflict: ConflictChoice? = nil) {
        self.source = source
        self.destination = destination
        self.conflict = conflict
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        let service = context.service
        let target = try await destination.resolve(for: source, in: service)
        let original = try await service.stat(source)
        let placed = try await context.settling(context.conflict(conflict, for: Self.self, otherwise: Self.defaultConflict), about: target) { policy, progress throws(CofferError) in
            try await service.move(source, to: target, conflict: policy, progress: progress)
        }
        return await service.placedNode(placed, made: original)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        destination.auditedPaths(from: source, outcome)
    }
}
