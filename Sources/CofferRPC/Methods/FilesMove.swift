import CofferCore

/// `files/move`: into `toDirectory`, under the same name; across mounts it copies, then
/// removes the source once the copy is in place.
struct FilesMove: RPCMethod {
    static let name = "files/move"
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
        let moved = try await context.service.move(source, to: destination, conflict: params.conflict ?? .fail,
                                                   progress: context.progress)
        return NodeResult(try await context.service.stat(moved))
    }
}
