import CofferCore
import FileService

/// `files/copy`: into `toDirectory`, keeping both names by default; progress with a token.
struct FilesCopy: RPCMethod {
    static let name = "files/copy"
    static let changesFiles = true
    static func auditedPaths(_ params: TransferParams) -> [String] { params.auditedPaths }

    static func run(_ params: TransferParams, _ context: RequestContext) async throws -> NodeResult {
        let (source, destination) = try await params.endpoints(context.service)
        let copied = try await context.service.copy(source, to: destination, conflict: params.conflict ?? .keepBoth,
                                                    progress: context.progress)
        return NodeResult(try await context.service.stat(copied))
    }
}

/// The params of `files/move` and `files/copy`: an item, the folder it goes into, and how
/// a name already there is handled.
struct TransferParams: Decodable, Sendable {
    var path: PathParam
    var toDirectory: PathParam
    var conflict: ConflictPolicy?
    var workDoneToken: ProgressToken?

    var auditedPaths: [String] { [path.audited, toDirectory.audited] }

    /// The source, and `toDirectory/name-of-source` after checking `toDirectory` is a folder.
    func endpoints(_ service: FileService) async throws(CofferError) -> (VirtualPath, VirtualPath) {
        let source = try path.resolved()
        let folder = try toDirectory.resolved()
        guard try await service.stat(folder).kind != .file else { throw CofferError(.notADirectory, path: folder) }
        guard !source.isRoot else { throw CofferError(.invalidOperation, path: source) }
        return (source, folder.appending(trustedName: source.name))
    }
}
