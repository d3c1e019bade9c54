public import CofferCore

/// Up to `length` bytes of a file from `offset`, as they are or as text.
///
/// As text, the file's encoding (UTF-8, UTF-16 with a byte-order mark, or GB 18030) is
/// decided from its start wherever the range is, and a character cut at the end of the
/// range is left for the next read (``TextRange/bytesRead`` says where that starts).
public struct ReadRange: FileOperation {
    public static let name = "read"

    public enum Form: Sendable, Hashable { case bytes, text }

    /// What was read, in the form asked for.
    public enum Content: Sendable {
        case bytes(ByteRange)
        case text(TextRange)
    }

    public var path: VirtualPath
    public var offset: Int64
    public var length: Int
    public var form: Form

    public init(_ path: VirtualPath, offset: Int64 = 0, length: Int, as form: Form) {
        (self.path, self.offset, self.length, self.form) = (path, offset, length, form)
    }

    public func run(in context: OperationContext) async throws(CofferError) -> Content {
        try await context.withProgress { (progress) throws(CofferError) -> Content in
            switch form {
            case .bytes: .bytes(try await context.service.readBytes(path, offset: offset, length: length, progress: progress))
            case .text: .text(try await context.service.readText(path, offset: offset, length: length, progress: progress))
            }
        }
    }
}
