public import CofferCore

/// Starts an upload: a file sent in chunks, invisible until ``CommitUpload``. It belongs to
/// the session: another session cannot see it, and closing the session discards it.
///
/// Default: a name already taken makes it fail (checked now and again at commit). `size`,
/// when given, caps what may be appended and must be reached by commit.
///
/// Fails with `noSuchFile` or `notADirectory` when the destination's folder is missing or is
/// a file, `isADirectory` for a mount's root, `readOnly` on a read-only mount, `fileExists`
/// for a taken name under `fail`, `invalidArgument` for a negative size, `tooLarge` when the
/// session (32) or the service (512) has as many uploads open as allowed, and `unsupported`
/// on a service without uploads (``UploadRegistry``).
public struct BeginUpload: FileOperation {
    public static let name = "beginUpload"
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictChoice = .fail

    /// Where the file is placed at commit.
    public var path: VirtualPath
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictChoice?
    /// The file's size in bytes, when the client knows it: appends may not go past it, and
    /// commit requires all of it; `nil` for no announced size.
    public var size: Int64?
    /// Whether the upload outlives the process: after a restart, a session of the same front
    /// end goes on with it by its id (tus's uploads). Otherwise it ends with its session.
    public var resumable: Bool

    /// Starts an upload to `path`.
    public init(_ path: VirtualPath, conflict: ConflictChoice? = nil, size: Int64? = nil, resumable: Bool = false) {
        self.path = path
        self.conflict = conflict
        self.size = size
        self.resumable = resumable
    }

    /// With ``ConflictChoice/ask``, a name already taken asks the session's question now, and
    /// the answer holds at commit too.
    ///
    /// - Returns: the upload's id.
    public func run(in context: OperationContext) async throws(CofferError) -> String {
        let choice = context.conflict(conflict, for: Self.self, otherwise: Self.defaultConflict)
        return try await context.settling(choice, about: path) { policy, _ throws(CofferError) in
            try await context.service.beginUpload(to: path, conflict: policy, size: size, owner: context.session.number,
                                                    resumable: resumable)
        }
    }
}
