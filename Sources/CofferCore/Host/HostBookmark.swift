public import Foundation

/// A remembered host file, opened in place rather than copied (seed 003 §6).
///
/// It records where the file was and what it was — device, inode and creation time, which
/// together name one file even across renames, plus size and modification time — so that
/// later uses notice when the file was deleted or replaced, and find it again when it was
/// renamed inside its folder. (Finding it is the host bridge's, in `CofferBackends`.)
public struct HostBookmark: Sendable, Hashable, Codable, Identifiable {
    /// The bookmark's number, unique in its container.
    public var id: Int
    /// The resolved host path, updated when the file is found under a new name.
    public var hostPath: String
    /// The file system the file is on (`st_dev`).
    public var device: UInt64
    /// The file's inode number (`st_ino`) on that file system.
    public var inode: UInt64
    /// Creation time where the file system records it; guards against a reused inode.
    public var creationDate: Date?
    /// The size when last seen.
    public var size: Int64
    /// The modification time when last seen.
    public var modificationDate: Date
    /// When the bookmark was made.
    public var createdAt: Date
    /// The path the file was opened by when that was a symbolic link to it: saves then
    /// rewrite the file in place, so the link keeps pointing at it.
    public var linkPath: String?

    /// A bookmark of the file at `hostPath` as it is now.
    public init(id: Int, hostPath: String, device: UInt64, inode: UInt64, creationDate: Date?, size: Int64,
                modificationDate: Date, createdAt: Date = Date()) {
        self.id = id
        self.hostPath = hostPath
        self.device = device
        self.inode = inode
        self.creationDate = creationDate
        self.size = size
        self.modificationDate = modificationDate
        self.createdAt = createdAt
    }

    /// The file's name: the last component of its host path.
    public var name: String { HostAccess.lastComponent(of: hostPath) }
}

/// A bookmark and whether it still finds its file.
public struct BookmarkStatus: Sendable {
    /// The bookmark.
    public var bookmark: HostBookmark
    /// `nil` when the file is there (perhaps under a new name); the reason otherwise.
    public var problem: CofferError?
    /// Whether the file was deleted or replaced since it was bookmarked.
    public var isStale: Bool { problem?.kind == .staleBookmark }

    /// What every front end shows of it: `ok`, `stale` (the file was deleted or replaced), or
    /// `unreachable` (it may be there, but cannot be reached now: ``problem`` says why).
    public enum State: String, Sendable {
        /// `ok`: found; `stale`: deleted or replaced; `unreachable`: not reachable now.
        case ok, stale, unreachable
    }

    /// What ``problem`` amounts to.
    public var state: State {
        switch problem {
        case nil: .ok
        case let problem? where problem.kind == .staleBookmark: .stale
        case .some: .unreachable
        }
    }

    /// The status of `bookmark`, with the problem its last check found (`nil`: none).
    public init(bookmark: HostBookmark, problem: CofferError?) { (self.bookmark, self.problem) = (bookmark, problem) }
}

/// A host file opened in place: its bookmark and what its name and content say it is.
public struct OpenedHostFile: Sendable {
    /// The bookmark that opened it.
    public var bookmark: HostBookmark
    /// What its name and content say it is.
    public var type: TypeAssessment
    /// The version of its content when opened, for a save conditional on it.
    public var version: FileVersion?

    /// A host file opened through `bookmark`.
    public init(bookmark: HostBookmark, type: TypeAssessment, version: FileVersion? = nil) {
        (self.bookmark, self.type, self.version) = (bookmark, type, version)
    }
}

/// A bookmarked host file while access to it is granted; reading after the grant ends fails.
public protocol HostFileReading: Sendable {
    /// The file's size when access began.
    var size: Int64 { get }
    /// The version of its content when access began, for a save conditional on it.
    var version: FileVersion { get }
    /// Up to `length` bytes from `offset`; fewer at the end of the file.
    func read(offset: Int64, length: Int) async throws(CofferError) -> [UInt8]
}

/// How a save through a bookmark places the new content.
public enum HostSaveMode: Sendable, Hashable {
    /// In the file's place (only while it is at `ifVersion`, when one is given).
    case replace(ifVersion: FileVersion?)
    /// Beside it, under the first free variant of its name (`notes (2).txt`); the file is left alone.
    case keepBoth
}

/// What a save through a bookmark did.
public struct HostSaveResult: Sendable {
    /// The outcome of a save.
    public init(bookmark: HostBookmark, savedPath: String, version: FileVersion, size: Int64, modified: Date,
                trashedID: String?) {
        (self.bookmark, self.savedPath, self.version, self.trashedID) = (bookmark, savedPath, version, trashedID)
        (self.size, self.modified) = (size, modified)
    }

    /// The saved file's size and modification time.
    public var size: Int64
    /// The saved file's modification time.
    public var modified: Date

    /// The bookmark, pointing at the saved file (a save by rename gives it a new inode).
    public var bookmark: HostBookmark
    /// The host path written (another name for keep both).
    public var savedPath: String
    /// The saved file's version, for the next conditional save.
    public var version: FileVersion
    /// The ID in the desktop trash of the content it replaced, if it replaced any.
    public var trashedID: String?
}
