import FileService

/// `files/fetch`: reads a file through so later reads are local (``FetchItem``: an S3
/// mount keeps it in its cache); progress with a token, cancellable.
struct FilesFetch: RPCMethod {
    static let name = "files/fetch"
    struct Params: Decodable, Sendable {
        var path: PathParam
        var workDoneToken: ProgressToken?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(FetchItem(try params.path.resolved())))
    }
}
