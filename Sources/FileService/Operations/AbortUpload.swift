public import CofferCore

/// Discards an upload begun with ``BeginUpload``: its data is removed and its id is
/// forgotten; nothing reaches its destination.
///
/// Fails with `notFoundUpload` for an id this session does not know (another session's,
/// one already committed or discarded, or one removed after an hour without data), and
/// with `unsupported` on a service without uploads (``UploadRegistry``).
public struct AbortUpload: FileOperation {
    public static let name = "abortUpload"

    /// The upload's id, as ``BeginUpload`` returned it.
    public var id: String

    /// Discards upload `id`.
    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) {
        try await context.service.abortUpload(id, owner: context.session.number)
    }
}
