import FileService
import Foundation

/// `trash/empty`: the only real delete; `olderThanDays` keeps recent items, `trashIds` deletes
/// those items alone (as `empty-trash NAME` does).
struct TrashEmpty: RPCMethod {
    static let name = "trash/empty"
    struct Params: Decodable, Sendable {
        var olderThanDays: Double?
        var trashIds: [String]?
    }
    struct Result: Encodable, Sendable { var removed: Int }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        if let ids = params.trashIds {
            guard params.olderThanDays == nil else {
                throw RPCError.invalidParams("give param “trashIds” or param “olderThanDays”, not both")
            }
            guard !ids.isEmpty else { throw RPCError.invalidParams("param “trashIds” must name at least one item") }
            return Result(removed: try await context.perform(EmptyTrash(items: ids)))
        }
        let emptying: EmptyTrash
        do {
            emptying = try EmptyTrash(olderThanDays: params.olderThanDays)
        } catch {
            throw RPCError.invalidParams("param “olderThanDays” must be a number of days, not negative")
        }
        return Result(removed: try await context.perform(emptying))
    }
}
