public import CofferCore

/// Appends the next chunk of an upload at `offset`, which must be what was received so far.
///
/// Fails with `notFoundUpload` for an id this session does not know, `invalidArgument` when
/// `offset` is not the count received so far or another chunk of the upload is being
/// written, and `tooLarge` when the chunk would go past the size announced at
/// ``BeginUpload``. A write that fails ends the upload.
public struct AppendUpload: FileOperation {
    public static let name = "appendUpload"

    /// The upload's id, as ``BeginUpload`` returned it.
    public var id: String
    /// Where the chunk goes: the number of bytes received so far.
    public var offset: Int64
    /// The chunk.
    public var bytes: [UInt8]

    /// Appends `bytes` to upload `id` at `offset`.
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
