import FileService

/// `files/stat`: one node.
struct FilesStat: RPCMethod {
    static let name = "files/stat"
    struct Params: Decodable, Sendable { var path: PathParam }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(StatItem(try params.path.resolved())), in: context)
    }
}

extension FilesStat: ImmediateRPCMethod, ImmediateAnswering {
    static func runImmediately(_ params: Params, _ context: RequestContext) throws -> NodeResult? {
        try context.session.performImmediately(StatItem(try params.path.resolved())).map { NodeResult($0, in: context) }
    }
}

extension FilesStat.Params: FlatDecodable {
    init?(flat members: FlatParams.Members) {
        guard case .string(let text)? = members["path"] else { return nil }
        path = PathParam(text: text)
    }
}
