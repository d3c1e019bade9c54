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

    /// The share's ID, as its link names it (`/s/ID`).
    public var id: String
    /// Looks up share `id`.
    public init(_ id: String) { self.id = id }

    public func run(in context: OperationContext) async throws(CofferError) -> Share {
        guard let share = await context.service.feature(ShareRegistry.self)?.share(id) else { throw CofferError(.noSuchFile) }
        return share
    }
}

/// The item a visitor of `share` names below it (none for the shared item itself), pinned
/// to what was shared: a file share answers only for its file; in a folder share no name
/// may be `..`, `.` or empty or hold a `/` or NUL, and no item on the way may be a
/// symbolic link, wherever it points.
///
/// Fails with `noSuchFile` for anything the share does not cover — a name below a file
/// share, a link on the way, a special file, a shared item gone or replaced by one of the
/// other kind — and with `invalidName` for a name that is no name. A service without
/// ``ShareRegistry`` fails with `unsupported`.
public struct FindSharedItem: FileOperation {
    public static let name = "share-item"

    /// The share the visitor came by.
    public var share: Share
    /// The names below the shared folder, one per level; empty for the shared item itself.
    public var names: [String]
    /// Finds the item `names` name below `share`.
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
    /// The password was right, or the share has none.
    case unlocked
    /// The password was wrong; the try is counted.
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

    /// The share whose password is tried.
    public var share: Share
    /// What the visitor typed.
    public var password: String
    /// Tries `password` for `share`.
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
    /// The share the download was made through.
    var share: Share { get }
    /// The file sent, or the folder zipped.
    var item: VirtualPath { get }
    /// How the download ended.
    var end: SharedDownloadEnd { get }
}

extension SharedDownloadEnding {
    public static var isAudited: Bool { true }

    /// Counts a complete download against the share's limit; a partial or refused one
    /// changes nothing.
    /// - Returns: the share as it is now; `nil` when it was revoked meanwhile (or the
    ///   service has no ``ShareRegistry``).
    public func run(in context: OperationContext) async throws(CofferError) -> Share? {
        guard case .complete = end else { return share }
        return await context.service.feature(ShareRegistry.self)?.countDownload(of: share.id)
    }

    /// One record naming the item, with the bytes sent; a refused download's outcome is its
    /// protocol status (`416`).
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

    /// The share the file was downloaded through.
    public var share: Share
    /// The file sent.
    public var item: VirtualPath
    /// How the download ended.
    public var end: SharedDownloadEnd
    /// The download of `item` through `share` ended as `end` says.
    public init(_ share: Share, item: VirtualPath, _ end: SharedDownloadEnd) {
        (self.share, self.item, self.end) = (share, item, end)
    }
}

/// A shared folder (or one below it) sent as a `.zip` ended (``SharedDownloadEnding``): a
/// complete one counts as one download of the share, as a whole file does.
public struct EndSharedZip: SharedDownloadEnding {
    public static let name = "share-zip"

    /// The share the folder was downloaded through.
    public var share: Share
    /// The folder zipped.
    public var item: VirtualPath
    /// How the download ended.
    public var end: SharedDownloadEnd
    /// The `.zip` of `folder` sent through `share` ended as `end` says.
    public init(_ share: Share, folder: VirtualPath, _ end: SharedDownloadEnd) {
        (self.share, self.item, self.end) = (share, folder, end)
    }
}
