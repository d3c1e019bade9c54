public import CofferCore

/// Up to `length` bytes of a file from `offset`, as they are or as text.
///
/// As text, the file's encoding (UTF-8, UTF-16 with a byte-order mark, or GB 18030) is
/// decided from its start wherever the range is, and a character cut at the end of the
/// range is left for the next read (``TextRange/bytesRead`` says where that starts).
///
/// Fails with `noSuchFile` when nothing is at the path, `isADirectory` for a folder,
/// `invalidArgument` for a negative offset or length, and, as text, `unsupported` (detail
/// `not-text`) for a file that is not text.
public struct ReadRange: FileOperation {
    public static let name = "read"

    /// How a range is read: `bytes` as they are, or `text` decoded from the file's encoding.
    public enum Form: Sendable, Hashable {
        /// The bytes as they are.
        case bytes
        /// Text, decoded from the file's encoding.
        case text
    }

    /// What was read, in the form asked for.
    public enum Content: Sendable {
        /// The bytes as they are.
        case bytes(ByteRange)
        /// The bytes decoded as text.
        case text(TextRange)
    }

    /// The file read.
    public var path: VirtualPath
    /// The first byte read.
    public var offset: Int64
    /// The most bytes read (fewer at the end of the file).
    public var length: Int
    /// As bytes, or as text.
    public var form: Form

    /// Reads up to `length` bytes of the file at `path` from `offset`, in `form`.
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
