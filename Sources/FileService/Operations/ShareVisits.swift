public import CofferCore
import CofferRuntime
import Foundation

// What a share link's visitor does, as operations of the visitor's own session (front end
// `share`, its client's address and the share's ID in every audit line): the link looked
// up, an item below it found, its password tried, a download ended. The web front end's
// `/s/ID` is one front end of these; the engine's share reads are the service's own.

/// The share a link names, as it is now (its state decides what the visitor gets).
///
/// - Throws: `noSuchFile` when there is none: revoked, or never made.
public struct OpenShare: FileOperation {
    public static let name = "share-open"

    public var id: String
    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) -> Share {
        guard let share = await context.service.feature(ShareRegistry.self)?.share(id) else { throw CofferError(.noSuchFile) }
        return share
    }
}

/// The item a visitor of `share` names below it (none for the shared item itself), pinned
/// to what was shared: no `..`, no link on the way (``FileService/sharedItem(_:_:)``).
public struct FindSharedItem: FileOperation {
    public static let name = "share-item"

    public var share: Share
    public var names: [String]
    public init(_ share: Share, names: [String]) {
        self.share = share
        self.names = names
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.service.require(ShareRegistry.self, "shares").item(share, names, in: context.service)
    }
}

/// What trying a share link's password came to.
public enum ShareUnlocking: Sendable, Hashable {
    case unlocked
    case wrongPassword
    /// Too many wrong passwords from this client: it may try again after these seconds.
    case wait(seconds: Int)
}

/// Tries a share link's password. Wrong ones are counted per share and the session's client;
/// past five, the client waits (a minute, doubling up to an hour). Every try is audited
/// (`ok`, `wrongPassword`, `rateLimited`).
public struct UnlockShare: FileOperation {
    public static let name = "share-password"
    public static let isAudited = true

    public var share: Share
    public var password: String
    public init(_ share: Share, password: String) {
        self.share = share
        self.password = password
    }

    public func run(in context: OperationContext) async throws(CofferError) -> ShareUnlocking {
        guard let hash = share.password else { return .unlocked }
        let attempts = try context.service.require(ShareRegistry.self, "shares").attempts
        let key = share.id + " " + (context.session.client ?? "")
        if let wait = attempts.wait(for: key) { return .wait(seconds: wait) }
        let password = self.password
        let matches = try await BlockingIO.run { _ throws(CofferError) in hash.matches(password) }
        guard matches else {
            attempts.failed(key)
            return .wrongPassword
        }
        attempts.succeeded(key)
        return .unlocked
    }

    public func auditRecords(for outcome: Result<ShareUnlocking, CofferError>) -> [AuditRecord] {
        let said = switch outcome {
        case .success(.unlocked): "ok"
        case .success(.wrongPassword): "wrongPassword"
        case .success(.wait): "rateLimited"
        case .failure(let error): error.kind.identifier
        }
        return [AuditRecord(paths: [share.path], outcome: said)]
    }
}

/// How a visitor's download went, as its front end saw it.
public enum SharedDownloadEnd: Sendable, Hashable {
    /// Sent through the last byte: the download counts against the share's limit.
    case complete(bytes: Int64)
    /// Cut off, or only a range short of the end: it does not count.
    case partial(bytes: Int64)
    /// Refused before anything was sent, with this protocol status (HTTP's `416`, say).
    case refused(status: Int)

    var bytes: Int64 {
        switch self {
        case .complete(let bytes), .partial(let bytes): bytes
        case .refused: 0
        }
    }
}

/// What ending a shared download does, for a file and for a folder's `.zip` alike: a complete
/// one counts against the share's limit (the front end says so just before the last bytes go,
/// so the next request already sees it); every one is audited with the item and the bytes sent.
/// Performing it returns the share as it is now (`nil` when it was revoked meanwhile).
public protocol SharedDownloadEnding: FileOperation where Output == Share? {
    var share: Share { get }
    /// The file sent, or the folder zipped.
    var item: VirtualPath { get }
    var end: SharedDownloadEnd { get }
}

extension SharedDownloadEnding {
    public static var isAudited: Bool { true }

    public func run(in context: OperationContext) async throws(CofferError) -> Share? {
        guard case .complete = end else { return share }
        return await context.service.feature(ShareRegistry.self)?.countDownload(of: share.id)
    }

    public func auditRecords(for outcome: Result<Share?, CofferError>) -> [AuditRecord] {
        var record = AuditRecord(paths: [item.description], outcome: outcome)
        if case .refused(let status) = end { record.outcome = String(status) }
        record.extra["bytes"] = String(end.bytes)
        return [record]
    }
}

/// A shared file's download ended (``SharedDownloadEnding``).
public struct EndSharedDownload: SharedDownloadEnding {
    public static let name = "share-download"

    public var share: Share
    public var item: VirtualPath
    public var end: SharedDownloadEnd
    public init(_ share: Share, item: VirtualPath, _ end: SharedDownloadEnd) {
        (self.share, self.item, self.end) = (share, item, end)
    }
}

/// A shared folder (or one below it) sent as a `.zip` ended (``SharedDownloadEnding``): a
/// complete one counts as one download of the share, as a whole file does.
public struct EndSharedZip: SharedDownloadEnding {
    public static let name = "share-zip"

    public var share: Share
    public var item: VirtualPath
    public var end: SharedDownloadEnd
    public init(_ share: Share, folder: VirtualPath, _ end: SharedDownloadEnd) {
        (self.share, self.item, self.end) = (share, folder, end)
    }
}
