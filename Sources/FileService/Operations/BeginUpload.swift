import CofferCore

/// Starts an upload: a file sent in chunks, invisible until ``CommitUpload``. It belongs to
/// the session: another session cannot see it, and closing the session discards it.
///
/// Default: a name already taken makes it fail (checked now and again at commit). `size`,
/// when given, caps what may be appended and must be reached by commit.
public struct BeginUpload: FileOperation {
    public static let name = "beginUpload"
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictPolicy = .fail

    public var path: VirtualPath
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictPolicy?
    public var size: Int64?

    public init(_ path: VirtualPath, conflict: ConflictPolicy? = nil, size: Int64? = nil) {
        self.path = path
        self.conflict = conflict
        self.size = size
    }

    /// - Returns: the upload's id.
    public func run(in context: OperationContext) async throws(CofferError) -> String {
        try await context.service.beginUpload(to: path, conflict: context.conflictPolicy(conflict, for: Self.self, otherwise: Self.defaultConflict), size: size, owner: context.session.number)
    }
}
