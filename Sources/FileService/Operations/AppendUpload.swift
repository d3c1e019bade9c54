public import CofferCore

/// Appends the next chunk of an upload at `offset`, which must be what was received so far.
public struct AppendUpload: FileOperation {
    public static let name = "appendUpload"

    public var id: String
    public var offset: Int64
    public var bytes: [UInt8]

    public init(_ id: String, offset: Int64, bytes: [UInt8]) {
        self.id = id
        self.offset = offset
        self.bytes = bytes
    }

    /// - Returns: the bytes received so far.
    public func run(in context: OperationContext) async throws(CofferError) -> Int64 {
        try await context.service.appendUpload(id, offset: offset, bytes: bytes, owner: context.session.number)
    }
}
