import CofferCore
import FileService

/// `host/import`: host files and folders copied in, one result per item.
struct HostImport: RPCMethod {
    static let name = "host/import"
    struct Params: Decodable, Sendable {
        var hostPaths: [String]
        var toDirectory: PathParam?
        var allowedTypes: [String]?
        var conflict: ConflictPolicy?
        var workDoneToken: ProgressToken?
    }
    struct Item: Encodable, Sendable {
        struct Failure: Encodable, Sendable { var kind: String; var message: String }
        struct Skipped: Encodable, Sendable { var hostPath: String; var error: Failure }
        var hostPath: String
        var node: NodeResult?
        var error: Failure?
        /// Entries inside an imported folder that were left out.
        var skipped: [Skipped]?
    }
    struct Result: Encodable, Sendable { var results: [Item] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let results = try await context.perform(ImportItems(params.hostPaths, into: try params.toDirectory?.resolved(),
                                                            allowedTypes: params.allowedTypes ?? [], conflict: params.conflict))
        func failure(_ error: CofferError) -> Item.Failure {
            Item.Failure(kind: error.kind.identifier, message: error.userMessage(in: context.language, hints: context.hints).text)
        }
        return Result(results: results.map { result in
            let skipped = result.skipped.map { Item.Skipped(hostPath: $0.hostPath, error: failure($0.error)) }
            switch result.outcome {
            case .success(let node):
                return Item(hostPath: result.hostPath, node: NodeResult(node), skipped: skipped.isEmpty ? nil : skipped)
            case .failure(let error):
                return Item(hostPath: result.hostPath, error: failure(error))
            }
        })
    }
}
