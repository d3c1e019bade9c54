public import CofferCore

/// Adds bytes at the end of a file (``FileService/appendToFile(_:bytes:)``), making it when
/// there is none; the file changes only when the whole append is done.
public struct AppendToFile: FileOperation {
    public static let name = "append"
    public static let changesFiles = true

    public var path: VirtualPath
    public var bytes: [UInt8]
    /// The file must be at this version (`changedSinceRead` otherwise).
    public var ifVersion: FileVersion?

    public init(_ path: VirtualPath, bytes: [UInt8], ifVersion: FileVersion? = nil) {
        self.path = path
        self.bytes = bytes
        self.ifVersion = ifVersion
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.service.appendToFile(path, bytes: bytes, ifVersion: ifVersion)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] { [path.description] }
}
