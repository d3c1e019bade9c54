public import CofferCore

/// Creates a folder; with `intermediates`, missing parents too, and an existing folder is
/// not an error (`mkdir -p`).
///
/// Fails with `fileExists` when something is at the path (without `intermediates`),
/// `noSuchFile` or `notADirectory` naming the folder on the way that is missing or is a
/// file, and `readOnly` on a read-only mount. The audit entry names the folder.
public struct CreateFolder: FileOperation {
    public static let name = "createFolder"
    public static let changesFiles = true

    /// The folder to create.
    public var path: VirtualPath
    /// Whether missing parents are created too, and an existing folder is accepted.
    public var intermediates: Bool

    /// Creates the folder at `path`.
    public init(_ path: VirtualPath, intermediates: Bool = false) {
        self.path = path
        self.intermediates = intermediates
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.service.createFolder(at: path, intermediates: intermediates)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] { [path.description] }
}
