import CCofferSystem
public import CofferCore
import CofferRuntime
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which paths of the host machine a front end may read from and write to.
///
/// A person at the REPL may name anything their account can read; a program talking
/// JSON-RPC gets only the folders allowed when Coffer was started. Either way the
/// container itself is off limits: the host bridge is for the rest of the machine, and
/// reaching `Library/Trash` or `AppData` through it would bypass the service.
///
/// A path is resolved once (`realpath`) and checked component by component, so `..`,
/// links and a shared string prefix (`/data/allowed-not`) cannot get out. It is then
/// opened below the allowed folder with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`,
/// so a link swapped in after the check makes the open fail instead of leading elsewhere.
public struct HostAccessPolicy: Sendable {
    /// Canonical folders that may be used; `nil` means anywhere.
    public let allowedFolders: [String]?
    /// Canonical folders that may never be used (the container).
    public let excludedFolders: [String]
    /// The same folders by device and inode, so a walk that reaches one through a parent
    /// folder's descriptor (never through its path) still recognises it.
    let excludedIdentities: [FileIdentity]

    struct FileIdentity: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
    }

    /// Anything the account can read, as at the REPL.
    public static let anywhere = HostAccessPolicy(allowedFolders: nil, excludedFolders: [], excludedIdentities: [])

    /// Nothing at all: the default for programs.
    public static let nowhere = HostAccessPolicy(allowedFolders: [], excludedFolders: [], excludedIdentities: [])

    /// Only inside `folders` (each resolved now; a folder that does not exist is an error).
    public static func only(_ folders: [String]) throws(CofferError) -> HostAccessPolicy {
        var canonical: [String] = []
        for folder in folders {
            let resolved = try canonicalPath(folder)
            var info = stat()
            guard stat(resolved, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw CofferError(.notADirectory, detail: HostAccess.lastComponent(of: folder))
            }
            canonical.append(resolved)
        }
        return HostAccessPolicy(allowedFolders: canonical, excludedFolders: [], excludedIdentities: [])
    }

    /// This policy, allowing `folders` as well (each resolved now). Exclusions still win:
    /// a folder inside an excluded one (the container) adds nothing. Anywhere stays anywhere.
    public func adding(_ folders: [String]) throws(CofferError) -> HostAccessPolicy {
        guard let allowedFolders else { return self }
        let added = try Self.only(folders).allowedFolders ?? []
        let merged = allowedFolders + added.filter { !allowedFolders.contains($0) }
        return HostAccessPolicy(allowedFolders: merged, excludedFolders: excludedFolders, excludedIdentities: excludedIdentities)
    }

    /// This policy, never allowing anything inside `folder`.
    public func excluding(_ folder: String) -> HostAccessPolicy {
        let resolved = (try? Self.canonicalPath(folder)) ?? folder
        var identities = excludedIdentities
        var info = coffer_stat()
        if coffer_statx(AT_FDCWD, resolved, &info) == 0 {
            identities.append(FileIdentity(device: info.device, inode: info.inode))
        }
        return HostAccessPolicy(allowedFolders: allowedFolders, excludedFolders: excludedFolders + [resolved],
                                excludedIdentities: identities)
    }

    /// Whether the host item at `path` may be used (read lexically, with links resolved where
    /// they exist; a path that no longer exists is judged as written).
    public func permits(_ path: String) -> Bool {
        allowedRoot(for: (try? Self.canonicalPath(path)) ?? path) != nil
    }

    /// Whether `item` is one of the excluded folders, however it was reached.
    func isExcluded(_ item: HostItem) -> Bool {
        excludedIdentities.contains(FileIdentity(device: item.device, inode: item.inode))
    }

    /// Whether a canonical path may be used, and below which allowed folder.
    func allowedRoot(for canonical: String) -> String? {
        if excludedFolders.contains(where: { Self.isInside(canonical, $0) }) { return nil }
        guard let allowedFolders else { return "/" }
        return allowedFolders.filter { Self.isInside(canonical, $0) }.max { $0.count < $1.count }
    }

    /// Whether `path` is `folder` or below it, comparing whole components.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        if folder == "/" { return path.hasPrefix("/") }
        return path == folder || path.hasPrefix(folder + "/")
    }

    /// `realpath`: absolute, no `.`/`..`, no links. Relative paths are taken from the
    /// current directory.
    static func canonicalPath(_ path: String) throws(CofferError) -> String {
        guard !path.isEmpty, !path.utf8.contains(0) else {
            throw CofferError(.invalidArgument, detail: "empty host path")
        }
        guard let resolved = realpath(path, nil) else {
            throw CofferError.lastSystemError("realpath", path: nil)
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Opens the host item at `path` if this policy allows it.
    ///
    /// - Throws: `hostAccessDenied` outside the allowed folders, `noSuchFile`,
    ///   `noPermission`, or `unsupported` for anything but a regular file or a folder.
    public func open(_ path: String) throws(CofferError) -> HostItem {
        let canonical = try Self.canonicalPath(path)
        let name = HostAccess.lastComponent(of: path)
        guard let root = allowedRoot(for: canonical) else {
            throw CofferError(.hostAccessDenied, detail: name)
        }
        let flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
        var fd: Int32
        if canonical == root {
            fd = Glibc.open(root, flags | O_NOFOLLOW)
        } else {
            let rootFD = Glibc.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard rootFD >= 0 else { throw CofferError.lastSystemError("open", path: nil) }
            defer { _ = Glibc.close(rootFD) }
            let relative = String(canonical.dropFirst(root == "/" ? 1 : root.count + 1))
            let resolve = UInt64(COFFER_RESOLVE_BENEATH | COFFER_RESOLVE_NO_SYMLINKS | COFFER_RESOLVE_NO_MAGICLINKS)
            repeat {
                fd = coffer_openat2(rootFD, relative, UInt64(flags), 0, resolve)
            } while fd < 0 && errno == EAGAIN
            if fd < 0 && errno == ENOSYS {
                // Old kernels: the last component at least is not followed.
                fd = Glibc.open(canonical, flags | O_NOFOLLOW)
            }
        }
        guard fd >= 0 else {
            // ELOOP/EXDEV: a link appeared on the way after the path was resolved.
            if errno == ELOOP || errno == EXDEV { throw CofferError(.hostAccessDenied, detail: name) }
            throw CofferError.lastSystemError("open", path: nil)
        }
        return try HostItem(descriptor: Descriptor(fd), path: canonical, name: name)
    }
}

/// A file or folder of the host machine, open and checked against the policy.
///
/// Holding the descriptor means later reads use what was checked, not whatever the path
/// names by then.
public final class HostItem: Sendable {
    let descriptor: Descriptor
    let info: coffer_stat
    /// The resolved path.
    public let path: String
    /// The name the caller used (the link's name when they named a link).
    public let name: String

    init(descriptor: Descriptor, path: String, name: String) throws(CofferError) {
        var info = coffer_stat()
        guard coffer_fstat(descriptor.raw, &info) == 0 else {
            throw CofferError.lastSystemError("fstat", path: nil)
        }
        switch FileMode(info.mode) {
        case .regular:
            _ = fcntl(descriptor.raw, F_SETFL, fcntl(descriptor.raw, F_GETFL) & ~O_NONBLOCK)
        case .directory:
            break
        default:
            throw CofferError(.unsupported)
        }
        self.descriptor = descriptor
        self.info = info
        self.path = path
        self.name = name
    }

    public var isFolder: Bool { FileMode(info.mode) == .directory }
    public var size: Int64 { isFolder ? 0 : Int64(info.size) }
    public var modificationDate: Date { info.modificationDate }
    /// Whether the item is still where it was opened (not removed since).
    var stillThere: Bool {
        var now = coffer_stat()
        return coffer_fstat(descriptor.raw, &now) == 0 && now.nlink > 0
    }
    /// The file system's identity of the item: device and inode.
    public var device: UInt64 { info.device }
    public var inode: UInt64 { info.inode }
    /// The version of its content when opened (``FileVersion``), as a sandbox file's.
    public var version: FileVersion { info.version }
    /// When the item was created, where the file system records it.
    public var creationDate: Date? {
        info.has_btime != 0 ? Date(timeIntervalSince1970: Double(info.btime_sec) + Double(info.btime_nsec) / 1e9) : nil
    }

    /// The item's type by its name and, for a file, by its content (``ContentSniffer``).
    public func assessedType(in registry: TypeRegistry) -> TypeAssessment {
        if isFolder { return TypeAssessment(byName: registry.typeIdentifier(forFolderNamed: name)) }
        return registry.assess(fileNamed: name, contentMIMEType: ContentSniffer.shared.mimeType(of: descriptor, registry: registry))
    }
}
