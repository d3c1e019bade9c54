public import CofferCore

/// Copies files and folders of the host machine into a folder, through the session's host
/// access. The host side is only read.
///
/// Defaults: into `files:/Import` (created when missing); keep both names when one is
/// taken; every type admitted. Each item gets its own result and its own audit entry, which
/// names where it landed (host paths are never recorded).
///
/// An item that fails — outside the session's host access (`hostAccessDenied`), missing
/// (`noSuchFile`), of a type not admitted (`typeNotAllowed`) — fails alone, in its result.
/// The operation itself fails only for the destination folder: missing (`noSuchFile`), a
/// file (`notADirectory`), or on a read-only mount (`readOnly`).
public struct ImportItems: FileOperation {
    public static let name = "import"
    public static let changesFiles = true
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictPolicy = .keepBoth

    /// The host files and folders copied in.
    public var hostPaths: [String]
    /// `nil`: `files:/Import`.
    public var folder: VirtualPath?
    /// Types by conformance, judged by content as well as name; empty admits everything.
    public var allowedTypes: [String]
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictPolicy?

    /// Copies `hostPaths` into `folder` (`files:/Import` when `nil`).
    public init(_ hostPaths: [String], into folder: VirtualPath? = nil, allowedTypes: [String] = [],
                conflict: ConflictPolicy? = nil) {
        self.hostPaths = hostPaths
        self.folder = folder
        self.allowedTypes = allowedTypes
        self.conflict = conflict
    }

    /// The folder items go into.
    public var destination: VirtualPath { folder ?? FileService.defaultImportFolder }

    public func run(in context: OperationContext) async throws(CofferError) -> [ImportResult] {
        let results = try await context.withProgress { progress throws(CofferError) in
            try await context.service.importItems(hostPaths: hostPaths, into: destination, allowedTypes: allowedTypes,
                                                  conflict: context.conflictPolicy(conflict, for: Self.self, otherwise: Self.defaultConflict), policy: context.session.hostPolicy,
                                                  progress: progress)
        }
        for case .success(let node) in results.map(\.outcome) where node.kind == .file {
            await context.service.noteUse(.item(node.path))
        }
        return results
    }

    public func auditRecords(for outcome: Result<[ImportResult], CofferError>) -> [AuditRecord] {
        guard case .success(let results) = outcome else {
            return [AuditRecord(paths: [destination.description], outcome: outcome)]
        }
        return results.map { result in
            AuditRecord(paths: [((try? result.outcome.get())?.path ?? destination).description], outcome: result.outcome)
        }
    }
}
