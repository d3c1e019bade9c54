public import CofferBackends
public import CofferCore
import CofferDesktop
import CofferSearch

/// The container a service was made for, for features that keep their files in it (the
/// transfers' records, for one).
public final class ContainerFeature: ServiceFeature {
    /// The container.
    public let container: Container

    /// The feature naming `container`.
    public init(_ container: Container) { self.container = container }
}

/// Whether a standard service keeps versions of replaced files, and how many.
public struct VersionSettings: Sendable, Hashable {
    /// Keep versions (and the journal of each session's changes, for undoing it); `false`
    /// sends replaced files to the trash instead, as before versions.
    public var keepsVersions: Bool
    /// What the upkeep's pruning keeps.
    public var policy: RetentionPolicy
    /// The most all versions may take, in bytes; `nil` for a tenth of the file system.
    public var sizeLimit: Int64?

    /// Settings with these values.
    public init(keepsVersions: Bool = true, policy: RetentionPolicy = .standard, sizeLimit: Int64? = nil) {
        self.keepsVersions = keepsVersions
        self.policy = policy
        self.sizeLimit = sizeLimit
    }

    /// Versions kept by the standard policy, within a tenth of the file system.
    public static let standard = VersionSettings()
}

extension FileService {
    /// The service of a standard container — the composition root of what Coffer's own front
    /// ends use. Its mounts: `files:` over `Documents/UserFiles`, `trash:` (read-only) over
    /// `Library/Trash`, and `staging:` (hidden) over `Documents/ExportTemp`, then
    /// `extraMounts`. Its features, each kept in the container (``Container`` names the
    /// files): the audit log, the search index of `files:`, the versions of files, uploads in progress, favourites,
    /// share links, the thumbnail cache (kept within `cacheLimits`), "Open with", and with
    /// `recordsRecents` the desktop's recent files. The host bridge never reaches into the
    /// container itself, whatever a session's host access allows.
    ///
    /// - Throws: what opening a mount's root throws (`noPermission` for a root that cannot be
    ///   read, say), the error naming that mount's root.
    public static func standard(container: Container, registry: TypeRegistry = .standard,
                                extraMounts: [Mount] = [], hostTrash: HostTrash = HostTrash(),
                                recordsRecents: Bool = false,
                                cacheLimits: CacheLimits = .standard) throws(CofferError) -> FileService {
        try standard(container: container, registry: registry, extraMounts: extraMounts, hostTrash: hostTrash,
                     recordsRecents: recordsRecents, cacheLimits: cacheLimits, versions: .standard)
    }

    /// The service of a standard container, keeping versions as `versions` says
    /// (``standard(container:registry:extraMounts:hostTrash:recordsRecents:cacheLimits:)`` keeps
    /// them by the standard policy).
    public static func standard(container: Container, registry: TypeRegistry = .standard,
                                extraMounts: [Mount] = [], hostTrash: HostTrash = HostTrash(),
                                recordsRecents: Bool = false,
                                cacheLimits: CacheLimits = .standard,
                                versions: VersionSettings) throws(CofferError) -> FileService {
        let journal = container.journal
        // A root that cannot be opened (a folder at mode 000) is named by its mount.
        func opening<Backend>(_ mount: String, _ open: () throws(CofferError) -> Backend) throws(CofferError) -> Backend {
            do { return try open() } catch { throw error.path == nil ? error.naming(.root(of: mount)) : error }
        }
        let files = try opening(VirtualPath.defaultMount) { () throws(CofferError) in
            try LocalSandboxBackend(rootPath: container.userFilesPath, registry: registry, journal: journal)
        }
        let staging = try opening("staging") { () throws(CofferError) in
            try ExportStagingBackend(path: container.exportStagingPath, registry: registry, journal: journal)
        }
        let trash = try opening("trash") { () throws(CofferError) in
            try TrashBackend(path: container.trashPath, registry: registry, origins: [
                VirtualPath.defaultMount: container.userFilesPath, staging.mountName: container.exportStagingPath,
            ], journal: journal)
        }
        var features: [any ServiceFeature] = [
            ContainerFeature(container),
            AuditLog(path: container.auditLogPath),
            SearchIndex(databasePath: container.searchIndexDatabasePath, mount: VirtualPath.defaultMount,
                        backend: files, registry: registry),
            Favourites(path: container.favouritesPath),
            ShareRegistry(path: container.sharesPath),
            ThumbnailCache(path: container.thumbnailsPath, limits: cacheLimits),
            OpenWithLauncher(),
        ]
        // A cache that cannot be made leaves the service without uploads, not without files.
        if let uploads = try? UploadRegistry(path: container.uploadsPath, journal: journal) { features.append(uploads) }
        // Without a version store (turned off, or a folder that cannot be made), replaced files
        // go to the trash and nothing is journaled for undoing.
        if versions.keepsVersions,
           let store = try? VersionStore(path: container.versionsPath, registry: registry, journal: journal,
                                         policy: versions.policy, sizeLimit: versions.sizeLimit) {
            features.append(store)
        }
        if recordsRecents { features.append(Recents()) }
        return FileService(mounts: [
            Mount(name: VirtualPath.defaultMount, backend: files, description: LocalizedText("Your files", "你的文件")),
            Mount(name: trash.mountName, backend: trash, isWritable: false,
                  description: LocalizedText("Deleted items, restorable (read-only)", "已删除、可恢复的项目（只读）")),
            Mount(name: staging.mountName, backend: staging, isVisible: false),
        ] + extraMounts, trash: trash, staging: staging, registry: registry,
           host: HostSettings(excludedFolders: [container.hostPath], bookmarksPath: container.bookmarksPath,
                              draftsPath: container.temporaryPath, trash: hostTrash),
           features: features)
    }
}
