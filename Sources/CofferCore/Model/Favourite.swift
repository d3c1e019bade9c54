public import Foundation

/// A place the user marked to come back to: a folder or file in a mount, or a folder of this
/// computer.
public struct Favourite: Sendable, Hashable, Codable {
    /// A virtual path (`files:/Notes`), or for a folder of this computer its host path.
    public var location: String
    /// Whether `location` is a host path.
    public var isHost: Bool
    /// Whether it was also written to the desktop's bookmarks (GTK's, which file managers share).
    public var onDesktop: Bool
    /// When it was marked.
    public var addedAt: Date

    /// A favourite of `location`.
    public init(location: String, isHost: Bool, onDesktop: Bool = false, addedAt: Date = Date()) {
        self.location = location
        self.isHost = isHost
        self.onDesktop = onDesktop
        self.addedAt = addedAt
    }
}

/// A favourite and whether it is still there: one that vanished is marked, never dropped.
public struct FavouriteStatus: Sendable, Hashable {
    /// The favourite.
    public var favourite: Favourite
    /// Gone (moved or deleted) since it was marked.
    public var isMissing: Bool
    /// A folder (or package), as opposed to a file; `nil` when missing.
    public var isFolder: Bool?

    /// The status of `favourite` as last checked.
    public init(favourite: Favourite, isMissing: Bool, isFolder: Bool?) {
        (self.favourite, self.isMissing, self.isFolder) = (favourite, isMissing, isFolder)
    }
}
