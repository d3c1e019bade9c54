import CofferCore
import FileService
import Foundation

/// `shares/create`: a link to `path` (a file, or a folder), with `expires?` (`"1h"`, `"7d"`, a
/// day or an ISO 8601 time), `password?`, `downloads?` (a limit) and `upload?` (a folder as a
/// drop box).
struct SharesCreate: RPCMethod {
    static let name = "shares/create"
    struct Params: Decodable, Sendable {
        var path: PathParam
        var expires: String?
        var password: String?
        var downloads: Int?
        var upload: Bool?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> ShareSummary {
        let expires = try params.expires.map { (text) throws(CofferError) in try Share.parseExpiry(text) }
        return try await context.perform(CreateShare(
            try params.path.resolved(), expires: expires, password: params.password, downloadLimit: params.downloads,
            upload: params.upload ?? false))
    }
}

/// `shares/list`: every share, oldest first, with its `state` (`active`, `expired`, `exhausted`).
struct SharesList: RPCMethod {
    static let name = "shares/list"
    struct Result: Encodable, Sendable { var shares: [ShareSummary] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(shares: try await context.perform(ListShares()))
    }
}

/// `shares/revoke`: ends share `id`; its link answers 404 from the next request on.
struct SharesRevoke: RPCMethod {
    static let name = "shares/revoke"
    struct Params: Decodable, Sendable { var id: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> ShareSummary {
        try await context.perform(RevokeShare(params.id))
    }
}
