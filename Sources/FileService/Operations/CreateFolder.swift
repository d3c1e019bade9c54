public import CofferCore

/// Creates a folder; with `intermediates`, missing parents too, and an existing folder is
/// not an error (`mkdir -p`).
public struct CreateFolder: FileOperation {
    public static let name = "createFolder"
    public static let changesFiles = true

    public var path: VirtualPath
    public var intermediates: Bool

    public init(_ path: VirtualPath, intermediates: Bool = false) {
        self.path = path
        self.intermediates = intermediates
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.service.createFolder(at: path, intermediates: intermediates)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] { [path.description] }
}
