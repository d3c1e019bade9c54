public import CofferCore
import CofferRuntime

/// Bytes arriving from a client as it sends them: a request's body.
public protocol IncomingBytes: Sendable {
    /// Waits for bytes and puts up to `buffer.count` of them at its start.
    /// - Returns: how many; 0 at the end of the body; a negative number when it was cut off.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
}

/// Appends a whole request body to an upload from `offset` (what was received so far), a
/// piece at a time as it arrives, read and written on one thread: tus's `PATCH`, a drop box's
/// file. What arrived before the body was cut off is kept, for the next request to go on from.
/// Audited with the upload, where the body began and what it brought, for whoever follows an
/// upload that resumed (unless ``auditsThisBody`` is `false`).
/// - Returns: the bytes received so far, this body's included.
public struct AppendUploadStream: FileOperation {
    public static let name = "appendUploadStream"
    public static let isAudited = true
    /// How much is read before it is appended.
    public static let pieceSize = 1 << 20

    /// The upload's id, as ``BeginUpload`` returned it.
    public var id: String
    /// Where the body's first byte goes: the number of bytes received so far.
    public var offset: Int64
    /// The request's body, read until it ends or is cut off.
    public var body: any IncomingBytes
    /// Where the upload goes, for the audit line.
    public var destination: VirtualPath
    /// Whether this body has an audit line of its own: yes for an upload that resumes across
    /// requests (tus), no for one whole in one request (a drop box's file, audited once as it
    /// lands).
    public var auditsThisBody: Bool

    /// Appends what `body` brings to upload `id` from `offset`; `destination` and
    /// `auditsThisBody` are for the audit line only.
    public init(_ id: String, offset: Int64, body: any IncomingBytes, destination: VirtualPath, auditsThisBody: Bool = true) {
        self.id = id
        self.offset = offset
        self.body = body
        self.destination = destination
        self.auditsThisBody = auditsThisBody
    }

    public func run(in context: OperationContext) async throws(CofferError) -> Int64 {
        try await context.service.appendUpload(id, offset: offset, from: body, owner: context.session.number)
    }

    public func auditRecords(for outcome: Result<Int64, CofferError>) -> [AuditRecord] {
        var record = AuditRecord(paths: [destination.description], outcome: outcome)
        record.extra = ["upload": id, "offset": String(offset)]
        if case .success(let received) = outcome { record.extra["bytes"] = String(received - offset) }
        return record.paths.isEmpty || !auditsThisBody ? [] : [record]
    }
}
