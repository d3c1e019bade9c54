import CofferCore
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
    /// An entry that does not follow the specification (`damagedInfo`, `missingItem`, `missingInfo`).
    struct Problem: Encodable, Sendable {
        var trashId: String
        var reason: String
        var message: String
    }
    struct Result: Encodable, Sendable {
        var items: [Item]
        var problems: [Problem]?
    }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        let listing = try await context.perform(ListTrash())
        let problems = listing.problems.map { Problem(trashId: $0.id, reason: $0.reason.rawValue, message: $0.message(in: context.language)) }
        return Result(items: listing.items.map { item in
            Item(trashId: item.id, name: item.originalPath.name, originalPath: item.originalPath.description,
                 deletedAt: item.deletionDate, size: item.size, kind: item.node.kind.rawValue)
        }, problems: problems.isEmpty ? nil : problems)
    }
}
