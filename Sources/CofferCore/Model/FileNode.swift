public import Foundation

/// One item in a mount, with everything a listing shows, read once when listed.
public struct FileNode: Sendable, Hashable, Identifiable {
    /// What an item is to the user.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A folder the user opens to see its contents.
        case folder
        /// A file, or anything that is not a folder (links, pipes and devices are shown as files).
        case file
        /// A folder with a package extension (`.app`, `.bundle`, `.rtfd`…), shown as one document.
        case package
    }

    /// What an item is on disk when it is not a plain file or folder.
    public enum Special: String, Sendable, Hashable, Codable {
        /// A symbolic link, a named pipe, a socket, or a device.
        case symbolicLink, fifo, socket, device
    }

    /// Where it is: its mount and its names from the root.
    public var path: VirtualPath
    /// What it is to the user.
    public var kind: Kind
    /// Size in bytes (0 for folders and packages; `du` sums their contents).
    public var size: Int64
    /// When it last changed; `Date.distantPast` where the storage keeps no date (an S3
    /// folder is only a prefix of its objects' names): see ``knownModificationDate``.
    public var modificationDate: Date
    /// Refuses what cannot be read as a file's bytes, by one rule for every reader: a folder or
    /// package is `isADirectory`; a link, pipe, socket or device is `unsupported` (opening a
    /// FIFO would hang; a link is never followed).
    public func requireReadableFile() throws(CofferError) {
        guard kind == .file else { throw CofferError(.isADirectory, path: path) }
        guard special == nil else { throw CofferError(.unsupported, path: path) }
    }

    /// The modification date, or `nil` where the storage keeps none: front ends show `-`
    /// (and leave `modified` out of an answer) rather than the year 0.
    public var knownModificationDate: Date? { modificationDate == .distantPast ? nil : modificationDate }
    /// When the file system reports it (statx birth time); `nil` otherwise.
    public var creationDate: Date?
    /// A dot-name, or a name listed in its folder's `.hidden` file.
    public var isHidden: Bool
    /// The uniform type identifier, from the type registry (`public.jpeg`, `public.folder`).
    public var typeIdentifier: String
    /// Whether backups skip this item (`user.xdg.robots.backup=false`); `false` also when a
    /// listing was told not to read it (`ListOptions.readsBackupExclusion`).
    public var isExcludedFromBackup: Bool
    /// Set for links, pipes, sockets and devices, which Coffer lists but never opens.
    public var special: Special?
    /// Where a symbolic link points, as stored in the link (never followed).
    public var linkTarget: String?
    /// Which state of its content a regular file is in, for conditional saves; `nil` for
    /// folders, special items and storage that keeps none.
    public var version: FileVersion?

    /// Its path, which names it in its mount.
    public var id: VirtualPath { path }
    /// Its name in its folder (the last of its path's names).
    public var name: String { path.name }
    /// Folders and packages: things that contain other items on disk.
    public var isContainer: Bool { kind != .file }

    /// The POSIX permission bits (`0o644`), where the storage keeps them (not on S3).
    public var permissions: UInt16?
    /// When it was last read, where the storage keeps it (mounted `relatime` or `noatime`, it lags).
    public var accessDate: Date?

    /// A node with these facts; what a backend builds for each item it lists or reads.
    public init(path: VirtualPath, kind: Kind, size: Int64 = 0, modificationDate: Date,
                creationDate: Date? = nil, isHidden: Bool = false, typeIdentifier: String,
                isExcludedFromBackup: Bool = false, special: Special? = nil, linkTarget: String? = nil,
                version: FileVersion? = nil, permissions: UInt16? = nil, accessDate: Date? = nil) {
        self.permissions = permissions
        self.accessDate = accessDate
        self.path = path
        self.kind = kind
        self.size = size
        self.modificationDate = modificationDate
        self.creationDate = creationDate
        self.isHidden = isHidden
        self.typeIdentifier = typeIdentifier
        self.isExcludedFromBackup = isExcludedFromBackup
        self.special = special
        self.linkTarget = linkTarget
        self.version = version
    }
}

extension FileNode {
    /// Two nodes are the same item in the same state whenever they were read: when it was last
    /// read (``accessDate``) is left out, since reading it changes nothing of it.
    public static func == (lhs: FileNode, rhs: FileNode) -> Bool {
        lhs.path == rhs.path && lhs.kind == rhs.kind && lhs.size == rhs.size && lhs.modificationDate == rhs.modificationDate
            && lhs.creationDate == rhs.creationDate && lhs.isHidden == rhs.isHidden && lhs.typeIdentifier == rhs.typeIdentifier
            && lhs.isExcludedFromBackup == rhs.isExcludedFromBackup && lhs.special == rhs.special
            && lhs.linkTarget == rhs.linkTarget && lhs.version == rhs.version && lhs.permissions == rhs.permissions
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(kind)
        hasher.combine(size)
        hasher.combine(modificationDate)
        hasher.combine(version)
    }

    /// The size every front end shows: a regular file's bytes; `nil` for folders and
    /// packages (their size is a walk, `du`'s job) and for links, pipes, sockets and
    /// devices (whose "size" says nothing about content).
    public var contentSize: Int64? { kind == .file && special == nil ? size : nil }

    /// Whether a name is hidden by the dot-name rule alone.
    public static func isDotName(_ name: String) -> Bool { name.utf8.first == UInt8(ascii: ".") }
}
