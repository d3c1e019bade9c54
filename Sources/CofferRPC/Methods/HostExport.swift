import CofferCore

/// `host/export`: a copy out to an allowed host folder; the source stays.
struct HostExport: RPCMethod {
    static let name = "host/export"
    static let changesFiles = true
    struct Params: Decodable, Sendable {
        var path: PathParam
        var hostDirectory: String
        var conflict: ConflictPolicy?
        var workDoneToken: ProgressToken?
    }
    struct Result: Encodable, Sendable { var hostPath: String }
    static func auditedPaths(_ params: Params) -> [String] { [params.path.audited] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        Result(hostPath: try await context.service.exportItem(try params.path.resolved(),
                                                              toHostDirectory: params.hostDirectory,
                                                              conflict: params.conflict ?? .keepBoth,
                                                              progress: context.progress))
    }
}
