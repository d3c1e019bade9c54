public import CofferCore

/// Copies an item out to a folder of the host machine, through the session's host access.
/// Always a copy, never a move: the item stays.
///
/// Default: an item already in the host folder keeps its name and the copy is named
/// `report (2).pdf`. The audit entry names the item (never the host path).
///
/// The item is staged in `staging:` first, then copied into the host folder. Fails with
/// `hostAccessDenied` when the session's host access does not reach the folder (the
/// container is never reached), `noSuchFile` when the item or the host folder is missing,
/// `notADirectory` when the host folder is a file, `invalidOperation` for a mount's root,
/// `fileExists` for a taken name under `fail`, and `unsupported` on a service without a
/// staging area or, with ``encoding``, for a file that is not text. What `replace`
/// displaces goes to the desktop's trash.
public struct ExportItem: FileOperation {
    public static let name = "export"
    public static let changesFiles = true
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictPolicy = .keepBoth

    /// The item copied out.
    public var path: VirtualPath
    /// The host folder the copy goes into.
    public var hostFolder: String
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictPolicy?
    /// For a text file: the encoding the copy is written in (`nil`: the bytes as they are).
    public var encoding: TextForm?

    /// Copies `path` into the host folder `hostFolder`.
    public init(_ path: VirtualPath, toHostFolder hostFolder: String, conflict: ConflictPolicy? = nil,
                encoding: TextForm? = nil) {
        self.path = path
        self.hostFolder = hostFolder
        self.conflict = conflict
        self.encoding = encoding
    }

    /// - Returns: the host path written.
    public func run(in context: OperationContext) async throws(CofferError) -> String {
        let written = try await context.withProgress { progress throws(CofferError) in
            try await context.service.exportItem(path, toHostDirectory: hostFolder, conflict: context.conflictPolicy(conflict, for: Self.self, otherwise: Self.defaultConflict),
                                                 encoding: encoding, policy: context.session.hostPolicy, progress: progress)
        }
        if (try? await context.service.stat(path))?.kind == .file { await context.service.noteUse(.host(written)) }
        return written
    }

    public func auditedPaths(for outcome: Result<String, CofferError>) -> [String] { [path.description] }
}
