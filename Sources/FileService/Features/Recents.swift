public import CofferDesktop
import CofferBackends
public import CofferCore
import CofferRuntime
public import Foundation

/// A file Coffer used, as `recent` lists it: in a mount (its virtual path) or on this computer
/// (its host path); never both, so a container's location is never shown.
public struct RecentFile: Sendable, Hashable {
    /// The item in a mount, when the file is one of a local mount's.
    public var path: VirtualPath?
    /// The file on this computer, when it is not one of a mount's.
    public var hostPath: String?
    /// When it was last used.
    public var used: Date
    /// Its MIME type, as recorded when it was used.
    public var mimeType: String?
}

/// The desktop's recent-files list (`RecentFiles`, the user's `recently-used.xbel`) as a
/// feature: the session's operations
/// record the files a user uses in it, and `recent` lists them.
public final class Recents: FileUseObserver {
    private let recents: RecentFiles

    /// Records in, and lists, `recents` (the user's `recently-used.xbel` by default).
    public init(_ recents: RecentFiles = RecentFiles()) {
        self.recents = recents
    }

    /// Records a use of a file of this computer, or of a file of a local mount (one with host
    /// paths); best effort, never failing the operation that used it.
    public func fileUsed(_ use: FileUse, in service: FileService) async {
        let hostPath: String
        switch use {
        case .host(let path): hostPath = path
        case .item(let path):
            guard let naming = service.hostPathNaming[path.mount] else { return }
            hostPath = Self.standardized(naming.hostPath(of: path))
        }
        let registry = service.registry
        let mimeType = registry.mimeType(of: registry.typeIdentifier(forFileNamed: HostAccess.lastComponent(of: hostPath)))
        _ = try? await BlockingIO.run { [recents] _ throws(CofferError) in try recents.record(hostPath: hostPath, mimeType: mimeType) }
    }

    /// A host path without `//` or `.`: the one a `file://` URI names.
    private static func standardized(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// The files Coffer used, newest first, as far as a session of `service` with host access
    /// `policy` may see them: the files of the service's local mounts (by their virtual paths),
    /// and files of this computer the policy reaches. The desktop's list is shared by every
    /// container, and by every program: another container's files, and this one's own hidden
    /// parts, are never shown.
    func files(of service: FileService, reachableBy policy: HostAccessPolicy) async -> [RecentFile] {
        let roots = service.hostPathNaming.map { (mount: $0.key, root: Self.standardized($0.value.hostPath(of: .root(of: $0.key)))) }
        let containers = service.excludedHostFolders
        return (try? await BlockingIO.run { [recents] _ throws(CofferError) in
            recents.coffersEntries().compactMap { entry -> RecentFile? in
                guard let hostPath = RecentFiles.hostPath(ofURI: entry.uri) else { return nil }
                for (mount, root) in roots where hostPath.hasPrefix(root + "/") {
                    let inside = hostPath.dropFirst(root.count + 1).split(separator: "/").map(String.init)
                    let path = inside.reduce(VirtualPath.root(of: mount)) { $0.appending(trustedName: $1) }
                    return RecentFile(path: path, hostPath: nil, used: entry.used, mimeType: entry.mimeType)
                }
                guard !containers.contains(where: { hostPath == $0 || hostPath.hasPrefix($0 + "/") }),
                      Container.enclosing(hostPath) == nil, policy.permits(hostPath) else { return nil }
                return RecentFile(path: nil, hostPath: hostPath, used: entry.used, mimeType: entry.mimeType)
            }
        }) ?? []
    }
}
