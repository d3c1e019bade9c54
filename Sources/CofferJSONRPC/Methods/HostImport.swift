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
        struct Skipped: Encodable, Sendable { var hostPath: String; var error: ItemFailure }
        var hostPath: String
        var node: NodeResult?
        var error: ItemFailure?
        /// Entries inside an imported folder that were left out.
        var skipped: [Skipped]?
    }
    struct Result: Encodable, Sendable { var results: [Item] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let results = try await context.perform(ImportItems(params.hostPaths, into: try params.toDirectory?.resolved(),
                                                            allowedTypes: params.allowedTypes ?? [], conflict: params.conflict))
        return Result(results: results.map { result in
            let skipped = result.skipped.map { Item.Skipped(hostPath: $0.hostPath, error: ItemFailure($0.error, context)) }
            switch result.outcome {
            case .success(let node):
                return Item(hostPath: result.hostPath, node: NodeResult(node), skipped: skipped.isEmpty ? nil : skipped)
            case .failure(let error):
                return Item(hostPath: result.hostPath, error: ItemFailure(error, context))
            }
        })
    }
}
