import CofferCore

/// Adds bytes at the end of a file (``FileService/appendToFile(_:bytes:)``), making it when
/// there is none; the file changes only when the whole append is done.
public struct AppendToFile: FileOperation {
    public static let name = "append"
    public static let changesFiles = true

    public var path: VirtualPath
    public var bytes: [UInt8]

    public init(_ path: VirtualPath, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.service.appendToFile(path, bytes: bytes)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] { [path.description] }
}
