import Foundation

/// A remembered host file, opened in place rather than copied (seed 003 §6).
///
/// It records where the file was and what it was — device, inode and creation time, which
/// together name one file even across renames, plus size and modification time — so that
/// later uses notice when the file was deleted or replaced, and find it again when it was
/// renamed inside its folder. (Finding it is the host bridge's, in `CofferBackends`.)
public struct HostBookmark: Sendable, Hashable, Codable, Identifiable {
    public var id: Int
    /// The resolved host path, updated when the file is found under a new name.
    public var hostPath: String
    public var device: UInt64
    public var inode: UInt64
    /// Creation time where the file system records it; guards against a reused inode.
    public var creationDate: Date?
    public var size: Int64
    public var modificationDate: Date
    /// When the bookmark was made.
    public var createdAt: Date

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
    public var bookmark: HostBookmark
    /// `nil` when the file is there (perhaps under a new name); the reason otherwise.
    public var problem: CofferError?
    public var isStale: Bool { problem?.kind == .staleBookmark }

    /// What every front end shows of it: `ok`, `stale` (the file was deleted or replaced), or
    /// `unreachable` (it may be there, but cannot be reached now: ``problem`` says why).
    public enum State: String, Sendable {
        case ok, stale, unreachable
    }

    public var state: State {
        switch problem {
        case nil: .ok
        case let problem? where problem.kind == .staleBookmark: .stale
        case .some: .unreachable
        }
    }

    public init(bookmark: HostBookmark, problem: CofferError?) { (self.bookmark, self.problem) = (bookmark, problem) }
}

/// A host file opened in place: its bookmark and what its name and content say it is.
public struct OpenedHostFile: Sendable {
    public var bookmark: HostBookmark
    public var type: TypeAssessment

    public init(bookmark: HostBookmark, type: TypeAssessment) { (self.bookmark, self.type) = (bookmark, type) }
}

/// A bookmarked host file while access to it is granted; reading after the grant ends fails.
public protocol HostFileReading: Sendable {
    /// The file's size when access began.
    var size: Int64 { get }
    /// Up to `length` bytes from `offset`; fewer at the end of the file.
    func read(offset: Int64, length: Int) async throws(CofferError) -> [UInt8]
}
