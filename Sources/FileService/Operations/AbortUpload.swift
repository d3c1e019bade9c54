public import CofferCore

/// Discards an upload.
public struct AbortUpload: FileOperation {
    public static let name = "abortUpload"

    public var id: String

    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) {
        try await context.service.abortUpload(id, owner: context.session.number)
    }
}
