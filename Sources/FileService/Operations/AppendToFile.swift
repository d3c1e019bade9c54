public import CofferCore

/// Adds bytes at the end of a file, making it when there is none; the file changes only
/// when the whole append is done.
///
/// The file is written anew — its content, then the bytes — and takes the old one's place
/// when complete, so a failed or cancelled append leaves it as it was. Fails with
/// `isADirectory` for a folder or a mount's root, `readOnly` on a read-only mount, and
/// `changedSinceRead` when ``ifVersion`` is given and the file is at another version or
/// gone. The audit entry names the file.
public struct AppendToFile: FileOperation {
    public static let name = "append"
    public static let changesFiles = true

    /// The file added to.
    public var path: VirtualPath
    /// What is added at its end.
    public var bytes: [UInt8]
    /// The file must be at this version, both when it is read and when the append is placed
    /// (`changedSinceRead` otherwise); `nil` appends to whatever is there.
    public var ifVersion: FileVersion?

    /// Adds `bytes` at the end of the file at `path`, only while it is at `ifVersion` when
    /// one is given.
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
