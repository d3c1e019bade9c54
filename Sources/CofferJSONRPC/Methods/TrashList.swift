import FileService
import Foundation

/// `trash/list`: what is in the trash, oldest first.
struct TrashList: RPCMethod {
    static let name = "trash/list"
    struct Item: Encodable, Sendable {
        var trashId: String
        var name: String
        var originalPath: String
        var deletedAt: Date?
        var size: Int64?
        var kind: String
    }
    struct Result: Encodable, Sendable { var items: [Item] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        let listing = try await context.perform(ListTrash())
        return Result(items: listing.items.map { item in
            Item(trashId: item.id, name: item.originalPath.name, originalPath: item.originalPath.description,
                 deletedAt: item.deletionDate, size: item.size, kind: item.node.kind.rawValue)
        })
    }
}
