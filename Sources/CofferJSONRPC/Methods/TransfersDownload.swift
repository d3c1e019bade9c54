import CofferCore
import CofferTransfers
import FileService

/// `transfers/download`: a URL into a folder (`files:/Download`), appearing when complete
/// under the server's name (``DownloadFile``), with progress; or, with `resume`, a download
/// that stopped, from where it stopped. Cancelled, it is paused, to be resumed.
struct TransfersDownload: RPCMethod {
    static let name = "transfers/download"
    struct Params: Decodable, Sendable {
        var url: String?
        var toDirectory: PathParam?
        var name: String?
        var resume: String?
        var maxSize: Int64?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        var engine = DownloadEngine()
        engine.maxSize = params.maxSize
        if let id = params.resume {
            return NodeResult(try await context.perform(DownloadFile(params.url ?? "", engine: engine, resuming: id)))
        }
        guard let url = params.url else { throw RPCError.invalidParams("missing param “url” (or “resume”)") }
        let folder = try params.toDirectory?.resolved() ?? DownloadFile.defaultFolder
        return NodeResult(try await context.perform(DownloadFile(url, into: folder, as: params.name, engine: engine)))
    }
}

/// `transfers/list`: every download remembered, oldest first, as its record says it.
struct TransfersList: RPCMethod {
    static let name = "transfers/list"
    struct Result: Encodable, Sendable { var downloads: [DownloadRecord] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(downloads: (try? TransferStore(of: context.service).all()) ?? [])
    }
}

/// `transfers/clear`: forgets the downloads done or failed (and unfinished ones left 30 days),
/// with their data, as `downloads --clear` does.
struct TransfersClear: RPCMethod {
    static let name = "transfers/clear"
    struct Result: Encodable, Sendable { var removed: Int }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(removed: try await context.perform(ClearDownloads()))
    }
}
