public import CofferCore

/// Places a finished upload at its destination (conflicts as chosen at its beginning).
/// The audit entry names where it was placed.
///
/// The data is made durable, then renamed or copied into place; whatever happens, the
/// upload is over afterwards. Fails with `notFoundUpload` for an id this session does not
/// know, `invalidArgument` when fewer bytes came than the size announced, `fileExists` when
/// the name was taken meanwhile under `fail`, and `changedSinceRead` when ``ifVersion`` is
/// given and the destination is at another version.
public struct CommitUpload: FileOperation {
    public static let name = "upload"
    public static let changesFiles = true

    /// The upload's id, as ``BeginUpload`` returned it.
    public var id: String
    /// A conditional save: the destination must be at this version (`changedSinceRead`
    /// otherwise), and is replaced whatever the upload's conflict choice.
    public var ifVersion: FileVersion?

    /// Places upload `id`, conditionally on `ifVersion` when one is given.
    public init(_ id: String, ifVersion: FileVersion? = nil) {
        self.id = id
        self.ifVersion = ifVersion
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.service.commitUpload(id, owner: context.session.number, ifVersion: ifVersion)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        switch outcome {
        case .success(let node): [node.path.description]
        case .failure(let error): error.path.map { [$0.description] } ?? []
        }
    }
}
