public import CofferCore
public import Foundation

/// A content a file had, kept when a change replaced it: a save, a replace by copy, move,
/// import or upload, a restore over it (see `Documentation/Versions.md`).
///
/// Versions belong to a file by its path and follow it when Coffer moves or renames it;
/// they go to the trash with it and come back with it.
public struct SavedVersion: Sendable, Hashable, Identifiable {
    /// Its number in the container's version store, unique and never reused:
    /// what `restore --version` and `files/restoreVersion` take.
    public var id: Int
    /// The file it is a version of (where the file is now).
    public var path: VirtualPath
    /// When the content was last modified before it was replaced.
    public var date: Date
    /// Its size in bytes.
    public var size: Int64
    /// Its type identifier, as the file had it.
    public var typeIdentifier: String
    /// When it was kept: when the change that superseded it happened.
    public var keptAt: Date
    /// The session whose change superseded it (``Session/id``), when one did.
    public var session: String?
    /// The front end of that session (`repl`, `rpc`, `mcp`, `web`…).
    public var frontEnd: String?
    /// Where a mount's own storage holds it (an S3 bucket's), when it is not in the
    /// container's version store.
    var held: HeldVersion?

    /// A version with these fields.
    public init(id: Int, path: VirtualPath, date: Date, size: Int64, typeIdentifier: String, keptAt: Date,
                session: String? = nil, frontEnd: String? = nil) {
        self.id = id
        self.path = path
        self.date = date
        self.size = size
        self.typeIdentifier = typeIdentifier
        self.keptAt = keptAt
        self.session = session
        self.frontEnd = frontEnd
    }
}

/// A version a mount's own storage holds (``VersionKeepingBackend``): the mount, and the
/// location its backend gave.
struct HeldVersion: Sendable, Hashable {
    var mount: String
    var location: String
}

/// Who made a change, as a version records it.
struct ChangeAuthor: Sendable, Hashable {
    var session: String?
    var frontEnd: String?
}
