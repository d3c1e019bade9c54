public import CofferCore

/// How far an upload has come: what a client that lost its connection asks before it sends
/// the rest (tus's `HEAD`).
public struct UploadStatus: Sendable, Hashable {
    public var received: Int64
    public var expectedSize: Int64?
    public var destination: VirtualPath
}

/// Reads an upload's ``UploadStatus``; only its own session sees it.
public struct ReadUploadStatus: FileOperation {
    public static let name = "uploadStatus"

    public var id: String
    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) -> UploadStatus {
        try context.service.uploadStatus(id, owner: context.session.number)
    }
}
