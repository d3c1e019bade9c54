import FileService
import Foundation

/// `trash/empty`: the only real delete; `olderThanDays` keeps recent items.
struct TrashEmpty: RPCMethod {
    static let name = "trash/empty"
    struct Params: Decodable, Sendable { var olderThanDays: Double? }
    struct Result: Encodable, Sendable { var removed: Int }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let emptying: EmptyTrash
        do {
            emptying = try EmptyTrash(olderThanDays: params.olderThanDays)
        } catch {
            throw RPCError.invalidParams("param “olderThanDays” must be a number of days, not negative")
        }
        return Result(removed: try await context.perform(emptying))
    }
}
