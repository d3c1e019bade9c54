public import CofferCore
public import Foundation

/// Shares an item by link (``Share``): `share` in the REPL, `shares/create` in RPC.
public struct CreateShare: FileOperation {
    public static let name = "share"
    public static let changesFiles = true

    public var path: VirtualPath
    public var expires: Date?
    public var password: String?
    public var downloadLimit: Int?
    public var upload: Bool

    public init(_ path: VirtualPath, expires: Date? = nil, password: String? = nil, downloadLimit: Int? = nil,
                upload: Bool = false) {
        self.path = path
        self.expires = expires
        self.password = password
        self.downloadLimit = downloadLimit
        self.upload = upload
    }

    public func run(in context: OperationContext) async throws(CofferError) -> ShareSummary {
        ShareSummary(try await context.service.require(ShareRegistry.self, "shares").create(path, in: context.service, expires: expires, password: password,
                                                           downloadLimit: downloadLimit, upload: upload))
    }

    public func auditedPaths(for outcome: Result<ShareSummary, CofferError>) -> [String] { [path.description] }
}

/// Every share, oldest first, with its state now.
public struct ListShares: FileOperation {
    public static let name = "shares"
    public init() {}

    public func run(in context: OperationContext) async throws(CofferError) -> [ShareSummary] {
        let now = Date()
        return try await context.service.require(ShareRegistry.self, "shares").all().map { ShareSummary($0, now: now) }
    }
}

/// Ends a share: its link answers 404 from the next request on, downloads under way included.
public struct RevokeShare: FileOperation {
    public static let name = "unshare"
    public static let changesFiles = true

    public var id: String
    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) -> ShareSummary {
        ShareSummary(try await context.service.require(ShareRegistry.self, "shares").revoke(id))
    }

    public func auditedPaths(for outcome: Result<ShareSummary, CofferError>) -> [String] {
        if case .success(let share) = outcome { return [share.path] }
        return []
    }
}
