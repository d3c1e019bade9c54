import CofferCore
import FileService
import Foundation

/// A share as RPC shows it: the summary, and `link`, its path on `coffer serve` (`/s/ID`).
struct ShareItem: Encodable, Sendable {
    var share: ShareSummary

    func encode(to encoder: any Encoder) throws {
        try share.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(share.link, forKey: Key(stringValue: "link")!)
    }

    private struct Key: CodingKey {
        var stringValue: String
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

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

    static func run(_ params: Params, _ context: RequestContext) async throws -> ShareItem {
        let expires = try params.expires.map { (text) throws(CofferError) in try Share.parseExpiry(text) }
        return ShareItem(share: try await context.perform(CreateShare(
            try params.path.resolved(), expires: expires, password: params.password, downloadLimit: params.downloads,
            upload: params.upload ?? false)))
    }
}

/// `shares/list`: every share, oldest first, with its `state` (`active`, `expired`, `exhausted`).
struct SharesList: RPCMethod {
    static let name = "shares/list"
    struct Result: Encodable, Sendable { var shares: [ShareItem] }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        Result(shares: try await context.perform(ListShares()).map { ShareItem(share: $0) })
    }
}

/// `shares/revoke`: ends share `id`; its link answers 404 from the next request on.
struct SharesRevoke: RPCMethod {
    static let name = "shares/revoke"
    struct Params: Decodable, Sendable { var id: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> ShareItem {
        ShareItem(share: try await context.perform(RevokeShare(params.id)))
    }
}
