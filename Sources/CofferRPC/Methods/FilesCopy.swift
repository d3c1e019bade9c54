import CofferCore
import FileService

/// `files/copy`: into `toDirectory`, keeping both names by default; progress with a token.
struct FilesCopy: RPCMethod {
    static let name = "files/copy"
    static let changesFiles = true
    struct Params: Decodable, Sendable {
        var path: PathParam
        var toDirectory: PathParam
        var conflict: ConflictPolicy?
        var workDoneToken: ProgressToken?
    }
    static func auditedPaths(_ params: Params) -> [String] { [params.path.audited, params.toDirectory.audited] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        let source = try params.path.resolved()
        let destination = try await intoFolder(source, try params.toDirectory.resolved(), context.service)
        let copied = try await context.service.copy(source, to: destination, conflict: params.conflict ?? .keepBoth,
                                                    progress: context.progress)
        return NodeResult(try await context.service.stat(copied))
    }
}

/// `folder/name-of-source`, after checking `folder` is a folder.
func intoFolder(_ source: VirtualPath, _ folder: VirtualPath, _ service: FileService) async throws(CofferError) -> VirtualPath {
    guard try await service.stat(folder).kind != .file else { throw CofferError(.notADirectory, path: folder) }
    guard !source.isRoot else { throw CofferError(.invalidOperation, path: source) }
    return folder.appending(trustedName: source.name)
}
