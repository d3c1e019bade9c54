public import CofferCore

/// How far an upload has come: what a client that lost its connection asks before it sends
/// the rest (tus's `HEAD`).
public struct UploadStatus: Sendable, Hashable {
    /// The bytes received so far: where the next chunk goes.
    public var received: Int64
    /// The size announced at ``BeginUpload``; `nil` when none was.
    public var expectedSize: Int64?
    /// Where the upload is placed at commit.
    public var destination: VirtualPath
}

/// Reads an upload's ``UploadStatus``; only its own session sees it (a resumable upload's,
/// any session that holds its id, after a restart too).
///
/// Fails with `notFoundUpload` for an id this session does not know, and `unsupported` on
/// a service without uploads.
public struct ReadUploadStatus: FileOperation {
    public static let name = "uploadStatus"

    /// The upload's id, as ``BeginUpload`` returned it.
    public var id: String
    /// Reads how far upload `id` has come.
    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) -> UploadStatus {
        try context.service.uploadStatus(id, owner: context.session.number)
    }
}
