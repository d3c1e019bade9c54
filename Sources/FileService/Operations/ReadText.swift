import CofferCore

/// Up to `length` bytes of a file from `offset`, as text in the file's encoding (UTF-8,
/// UTF-16 with a byte-order mark, or GB 18030, decided from the file's start). A character
/// cut at the end of the range is left for the next read.
public struct ReadText: FileOperation {
    public static let name = "readText"

    public var path: VirtualPath
    public var offset: Int64
    public var length: Int

    public init(_ path: VirtualPath, offset: Int64 = 0, length: Int) {
        self.path = path
        self.offset = offset
        self.length = length
    }

    public func run(in context: OperationContext) async throws(CofferError) -> TextRange {
        try await context.service.readText(path, offset: offset, length: length)
    }
}
