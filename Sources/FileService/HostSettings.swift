public import CofferBackends

/// How a ``FileService`` meets the computer it runs on: the host folders no session may use,
/// where bookmarks of files opened in place and editors' drafts are kept, and the desktop
/// trash a host item replaced by an export or a save goes to.
public struct HostSettings: Sendable {
    /// Host folders closed to every session, whatever its `HostAccess` (a container's own).
    public var excludedFolders: [String]
    /// The JSON file bookmarks are kept in; `nil` keeps none.
    public var bookmarksPath: String?
    /// Where edits keep their private copies; `nil` for a service that cannot edit.
    public var draftsPath: String?
    /// The user's desktop trash.
    public var trash: HostTrash

    /// Settings as given; by default no folder is closed, no bookmarks or drafts are kept,
    /// and the user's own desktop trash is used.
    public init(excludedFolders: [String] = [], bookmarksPath: String? = nil, draftsPath: String? = nil,
                trash: HostTrash = HostTrash()) {
        self.excludedFolders = excludedFolders
        self.bookmarksPath = bookmarksPath
        self.draftsPath = draftsPath
        self.trash = trash
    }
}
