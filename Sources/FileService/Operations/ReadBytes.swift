import CofferCore

/// Up to `length` bytes of a file, from `offset`.
public struct ReadBytes: FileOperation {
    public static let name = "read"

    public var path: VirtualPath
    public var offset: Int64
    public var length: Int

    public init(_ path: VirtualPath, offset: Int64 = 0, length: Int) {
        self.path = path
        self.offset = offset
        self.length = length
    }

    public func run(in context: OperationContext) async throws(CofferError) -> ByteRange {
        try await context.service.readBytes(path, offset: offset, length: length)
    }
}
