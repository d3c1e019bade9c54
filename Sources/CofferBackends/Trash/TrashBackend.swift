import CCofferSystem
public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The trash: soft delete, restorable, in the freedesktop.org Trash specification 1.0
/// layout so desktop tools (trash-cli, file managers) read it too.
///
/// ```
/// <container>/Library/Trash/
///   files/<id>                 the trashed item, whole
///   info/<id>.trashinfo        where it came from and when
///   directorysizes             cached sizes of trashed folders
/// ```
///
/// Mounted read-only as `trash:`: browsing goes through a ``LocalSandboxBackend`` over
/// `files/`, with the same confinement as `files:`. Putting in, restoring and emptying are
/// the trash's own operations, which `FileService` calls.
public final class TrashBackend: StorageBackend, ImmediateMetadata, Sendable {
    /// The mount name it is meant to be mounted under.
    public let mountName: String
    let trashFolder: Descriptor
    let infoFolder: Descriptor
    let filesFolder: Descriptor
    /// Read-only browsing of `files/`.
    let browser: LocalSandboxBackend
    /// Writing into `files/`, for items that come from a backend that cannot rename into it.
    let writer: LocalSandboxBackend
    /// Host folders of the mounts items come from, to write `Path=` and read it back.
    let origins: [(mount: String, hostPath: String)]
    /// The trash's own host folder, as given.
    let path: String
    /// Where entries being put in or taken out are noted, for recovery after a crash.
    let journal: OperationJournal?

    /// Opens (creating `files/` and `info/` if needed) the trash at `path`.
    ///
    /// - Parameter origins: for each mount whose items may be trashed, its host folder.
    public init(path: String, mountName: String = "trash", registry: TypeRegistry = .standard,
                origins: [String: String] = [:], journal: OperationJournal? = nil) throws(CofferError) {
        let trash = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard trash >= 0 else { throw CofferError.lastSystemError("open", path: nil) }
        trashFolder = Descriptor(trash)
        for part in ["files", "info"] where mkdirat(trash, part, 0o700) != 0 && errno != EEXIST {
            throw CofferError.lastSystemError("mkdirat", path: nil)
        }
        infoFolder = try trashFolder.openFolder(named: "info", reporting: nil)
        filesFolder = try trashFolder.openFolder(named: "files", reporting: nil)
        browser = try LocalSandboxBackend(rootPath: path + "/files", registry: registry, writable: false)
        writer = try LocalSandboxBackend(rootPath: path + "/files", registry: registry, syncBeforeCommit: false,
                                         journal: journal)
        self.mountName = mountName
        self.path = path
        self.journal = journal
        // Canonical paths (no `//`, `.` or links on the way), as other tools write them.
        self.origins = origins.map { ($0.key, Self.canonical($0.value)) }
            .sorted { $0.hostPath.count > $1.hostPath.count }
    }

    // MARK: Browsing (read-only)

    public var capabilities: BackendCapabilities { [] }

    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        try await browser.contentsOfFolder(at: path)
    }

    public func node(at path: VirtualPath) async throws -> FileNode {
        try await browser.node(at: path)
    }

    public func nodeImmediately(at path: VirtualPath) throws(CofferError) -> FileNode { try browser.nodeSync(at: path) }

    public func openFile(at path: VirtualPath) async throws -> any ReadableFile {
        try await browser.openFile(at: path)
    }

    public func createFolder(at path: VirtualPath) async throws { throw CofferError(.readOnly, path: path) }

    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite { throw CofferError(.readOnly, path: path) }

    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        throw CofferError(.readOnly, path: source)
    }

    public func removeItem(at path: VirtualPath) async throws { throw CofferError(.readOnly, path: path) }

    public func copyItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy,
                         progress: ProgressReporter) async throws {
        throw CofferError(.readOnly, path: destination)
    }

    // MARK: Paths

    /// `path` resolved by `realpath`, else with its slashes tidied.
    static func canonical(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let parts = path.split(separator: "/")
        return "/" + parts.joined(separator: "/")
    }

    /// The host path written as `Path=` for a virtual path (the virtual path itself when
    /// its mount has no host folder).
    func hostPath(for path: VirtualPath) -> String {
        guard let origin = origins.first(where: { $0.mount == path.mount }) else { return path.description }
        return path.isRoot ? origin.hostPath : origin.hostPath + "/" + path.relativeString
    }

    /// Where an item from outside every mount goes back: the root of `files:`.
    static func foreignTarget(name: String, id: String) -> VirtualPath {
        (try? VirtualPath.root().appending(name)) ?? VirtualPath.root().appending(trustedName: id)
    }

    /// Where an item goes back: the info's virtual path, else its host path mapped into a
    /// mount, else (a foreign item) the root of the first mount under its own name.
    func restoreTarget(for info: TrashInfo, id: String) -> (VirtualPath, foreign: Bool) {
        // Coffer's own key wins: it survives the container folder moving. (A mount that no
        // longer exists makes the restore fail with a clear error rather than guess.)
        if let virtual = info.virtualPath, !virtual.isRoot {
            return (virtual, false)
        }
        for origin in origins where info.path.hasPrefix(origin.hostPath + "/") {
            let relative = String(info.path.dropFirst(origin.hostPath.count + 1))
            if let path = try? VirtualPath(mount: origin.mount, components: relative.split(separator: "/").map(String.init)),
               !path.isRoot {
                return (path, false)
            }
        }
        let name = info.path.split(separator: "/").last.map(String.init) ?? id
        return (Self.foreignTarget(name: name, id: id), true)
    }
}
