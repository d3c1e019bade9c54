public import CofferCore

/// Moves items to the trash, all in one pass (much faster than one at a time for many
/// items). Nothing is deleted: ``RestoreItem`` puts them back. Each item gets its own
/// result, and its own audit entry; a failure does not stop the others.
///
/// An item fails alone — `noSuchFile` when missing, `readOnly` on a read-only mount,
/// `invalidOperation` for a mount's root, `unsupported` on a service without a trash — in
/// its result; the operation itself does not throw.
public struct TrashItems: FileOperation {
    public static let name = "trash"
    public static let changesFiles = true

    /// The items trashed.
    public var paths: [VirtualPath]

    /// Moves `paths` to the trash.
    public init(_ paths: [VirtualPath]) { self.paths = paths }

    public func run(in context: OperationContext) async throws(CofferError) -> [Result<TrashItem, CofferError>] {
        await context.service.trash(paths)
    }

    public func auditRecords(for outcome: Result<[Result<TrashItem, CofferError>], CofferError>) -> [AuditRecord] {
        guard case .success(let results) = outcome else {
            return paths.map { AuditRecord(paths: [$0.description], outcome: outcome) }
        }
        return zip(paths, results).map { AuditRecord(paths: [$0.description], outcome: $1) }
    }
}
