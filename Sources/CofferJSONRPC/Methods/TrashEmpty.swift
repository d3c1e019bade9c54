import FileService
import Foundation

/// `trash/empty`: the only real delete; `olderThanDays` keeps recent items.
struct TrashEmpty: RPCMethod {
    static let name = "trash/empty"
    struct Params: Decodable, Sendable { var olderThanDays: Double? }
    struct Result: Encodable, Sendable { var removed: Int }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        if let days = params.olderThanDays, days < 0 || !days.isFinite {
            throw RPCError.invalidParams("param “olderThanDays” must be a number of days, not negative")
        }
        let cutoff = params.olderThanDays.map { Date().addingTimeInterval(-$0 * 86_400) }
        return Result(removed: try await context.perform(EmptyTrash(olderThan: cutoff)))
    }
}
