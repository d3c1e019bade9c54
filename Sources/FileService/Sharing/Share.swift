public import CofferCore
public import CofferRuntime
public import Foundation

/// A link to one file or one folder that `coffer serve` answers at `/s/ID` without the access
/// token: for someone else, read-only unless it is a drop box.
///
/// A share is pinned to exactly what was shared: a file share serves that file and nothing
/// else, a folder share that folder's tree and nothing outside it (``FindSharedItem``).
/// Shares are kept in the container (`AppData/shares.json`), so they outlive the server and
/// every front end sees the same ones.
public struct Share: Codable, Sendable, Equatable {
    /// 128 random bits, base64url without padding (22 characters).
    public var id: String
    /// The item shared, as a virtual path.
    public var path: String
    /// Whether a folder is shared (else a file).
    public var isFolder: Bool
    /// When the share was made.
    public var created: Date
    /// After this moment the link answers 410 Gone.
    public var expires: Date?
    /// A visitor must give this password first.
    public var password: PasswordHash?
    /// After this many downloads have finished the link answers 410 Gone.
    public var downloadLimit: Int?
    /// Downloads finished so far (a download counts when its last byte is sent).
    public var downloads: Int
    /// A drop box: visitors may upload into the folder (never over anything), and see nothing of it.
    public var allowsUpload: Bool

    /// A share with every field given; ``CreateShare`` makes new ones.
    public init(id: String, path: String, isFolder: Bool, created: Date, expires: Date?, password: PasswordHash?,
                downloadLimit: Int?, downloads: Int, allowsUpload: Bool) {
        self.id = id
        self.path = path
        self.isFolder = isFolder
        self.created = created
        self.expires = expires
        self.password = password
        self.downloadLimit = downloadLimit
        self.downloads = downloads
        self.allowsUpload = allowsUpload
    }

    /// What a share's link answers.
    public enum State: String, Sendable, Hashable, Encodable {
        /// `active`: the link serves the shared item; `expired`: its expiry has passed, and
        /// `exhausted`: its download limit is reached (both answer 410 Gone).
        case active, expired, exhausted
    }

    /// What the link answers at `now`.
    public func state(at now: Date = Date()) -> State {
        if let expires, now >= expires { return .expired }
        if let downloadLimit, downloads >= downloadLimit { return .exhausted }
        return .active
    }

    /// ``path`` parsed; `nil` when it does not parse (a file edited by hand).
    public var virtualPath: VirtualPath? { try? VirtualPath(parsing: path) }

    /// A new identifier: 16 bytes from the system's random source. Never one that starts with
    /// `-` (drawn again, 1 time in 64), which a command line would take for an option
    /// (`unshare -Yv…`).
    public static func makeID() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let id = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            if !id.hasPrefix("-") { return id }
        }
    }

    /// Whether `text` has the shape of an identifier (22 base64url characters), checked before
    /// anything is looked up.
    public static func isWellFormedID(_ text: String) -> Bool {
        text.utf8.count == 22 && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// An expiry as every front end takes it: a duration from `now` (`30m`, `12h`, `7d`, `2w`),
    /// a day (`2026-12-24`, its local midnight) or an ISO 8601 time; it must lie ahead.
    public static func parseExpiry(_ text: String, now: Date = Date()) throws(CofferError) -> Date {
        let date: Date
        if let span = SearchFilters.parseDuration(text), span > 0 {
            date = now.addingTimeInterval(span)
        } else {
            do {
                date = try SearchFilters.parseDate(text, now: now)
            } catch {
                throw CofferError(.invalidArgument, detail: "“\(text)” is not an expiry: use 30m, 12h, 7d, 2w, 2026-12-24 or an ISO 8601 time")
            }
        }
        guard date > now else { throw CofferError(.invalidArgument, detail: "the expiry “\(text)” has passed already") }
        return date
    }
}

/// A share as front ends show it: everything but the password's hash.
public struct ShareSummary: Sendable, Encodable, Hashable {
    /// The share's ID (``Share/id``).
    public var id: String
    /// The link's path on a server (`/s/ID`), to put after its address.
    public var link: String
    /// The item shared, as a virtual path.
    public var path: String
    /// `file` or `folder`.
    public var kind: String
    /// When the share was made.
    public var created: Date
    /// When the link stops answering; `nil` for never.
    public var expires: Date?
    /// Whether a visitor must give a password.
    public var hasPassword: Bool
    /// How many finished downloads the link allows; `nil` for no limit.
    public var downloadLimit: Int?
    /// Downloads finished so far.
    public var downloads: Int
    /// Whether the share is a drop box (``Share/allowsUpload``).
    public var upload: Bool
    /// What the link answers at the time the summary was made.
    public var state: Share.State

    /// The summary of `share`, its state as of `now`.
    public init(_ share: Share, now: Date = Date()) {
        id = share.id
        link = "/s/" + share.id
        path = share.path
        kind = share.isFolder ? "folder" : "file"
        created = share.created
        expires = share.expires
        hasPassword = share.password != nil
        downloadLimit = share.downloadLimit
        downloads = share.downloads
        upload = share.allowsUpload
        state = share.state(at: now)
    }
}
