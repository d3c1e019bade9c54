import CofferCore

/// `files/move`: into `toDirectory`, under the same name; across mounts it copies, then
/// removes the source once the copy is in place. Conflicts fail unless asked.
struct FilesMove: RPCMethod {
    static let name = "files/move"
    static let changesFiles = true
    static func auditedPaths(_ params: TransferParams) -> [String] { params.auditedPaths }

    static func run(_ params: TransferParams, _ context: RequestContext) async throws -> NodeResult {
        let (source, destination) = try await params.endpoints(context.service)
        let moved = try await context.service.move(source, to: destination, conflict: params.conflict ?? .fail,
                                                   progress: context.progress)
        return NodeResult(try await context.service.stat(moved))
    }
}
