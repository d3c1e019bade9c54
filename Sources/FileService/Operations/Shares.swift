public import CofferCore
public import Foundation

/// Shares an item by link (``Share``): `share` in the REPL, `shares/create` in RPC.
///
/// Fails with `noSuchFile` when the item is missing, `unsupported` for a link or a special
/// file (and on a service without ``ShareRegistry``), `invalidArgument` for a drop box on a
/// file, a download limit below 1 or an empty password, and `readOnly` for a drop box on a
/// read-only mount.
public struct CreateShare: FileOperation {
    public static let name = "share"
    public static let changesFiles = true

    /// The file or folder shared.
    public var path: VirtualPath
    /// When the link stops answering; `nil` for never (``Share/parseExpiry(_:now:)`` reads
    /// what a person types).
    public var expires: Date?
    /// A password a visitor must give first; kept only as a hash.
    public var password: String?
    /// How many finished downloads the link allows; `nil` for no limit.
    public var downloadLimit: Int?
    /// Whether a shared folder is a drop box: visitors may upload into it and see nothing
    /// of it.
    public var upload: Bool

    /// Shares the item at `path` with the limits given.
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
///
/// Fails with `unsupported` on a service without ``ShareRegistry``.
public struct ListShares: FileOperation {
    public static let name = "shares"
    /// Lists the shares.
    public init() {}

    public func run(in context: OperationContext) async throws(CofferError) -> [ShareSummary] {
        let now = Date()
        return try await context.service.require(ShareRegistry.self, "shares").all().map { ShareSummary($0, now: now) }
    }
}

/// Ends a share: its link answers 404 from the next request on, downloads under way included.
///
/// Fails with `invalidArgument` when there is no share with the ID, and `unsupported` on a
/// service without ``ShareRegistry``.
public struct RevokeShare: FileOperation {
    public static let name = "unshare"
    public static let changesFiles = true

    /// The share's ID.
    public var id: String
    /// Ends share `id`.
    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) -> ShareSummary {
        ShareSummary(try await context.service.require(ShareRegistry.self, "shares").revoke(id))
    }

    public func auditedPaths(for outcome: Result<ShareSummary, CofferError>) -> [String] {
        if case .success(let share) = outcome { return [share.path] }
        return []
    }
}
