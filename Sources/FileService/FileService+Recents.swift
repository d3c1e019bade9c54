import CofferBackends
import CofferCore
import CofferRuntime
import Foundation

/// A file Coffer used, as `recent` lists it: in a mount (its virtual path) or on this computer.
public struct RecentFile: Sendable, Hashable {
    /// The item in a mount, when the file is one of a local mount's.
    public var path: VirtualPath?
    /// The file on this computer.
    public var hostPath: String
    public var used: Date
    public var mimeType: String?
}

/// The recent-files list (``RecentFiles``): what the session's operations record, and
/// what `recent` lists.
extension FileService {
    /// Records a use of the item at `path` when it is a file of a local mount (one with host
    /// paths); best effort, never failing the operation that used it.
    package func noteRecent(_ path: VirtualPath) async {
        guard let recents, let naming = hostPathNaming[path.mount] else { return }
        await noteRecent(hostPath: Self.standardized(naming.hostPath(of: path)), recents: recents)
    }

    /// Records a use of a file of this computer.
    package func noteRecent(hostPath: String) async {
        guard let recents else { return }
        await noteRecent(hostPath: hostPath, recents: recents)
    }

    private func noteRecent(hostPath: String, recents: RecentFiles) async {
        let mimeType = registry.mimeType(of: registry.typeIdentifier(forFileNamed: HostAccess.lastComponent(of: hostPath)))
        _ = try? await BlockingIO.run { _ throws(CofferError) in try recents.record(hostPath: hostPath, mimeType: mimeType) }
    }

    /// A host path without `//` or `.`: the one a `file://` URI names.
    private static func standardized(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// The files Coffer used, newest first (files of a local mount named by their virtual path).
    func recentFiles() async -> [RecentFile] {
        guard let recents else { return [] }
        let entries = (try? await BlockingIO.run { _ throws(CofferError) in recents.coffersEntries() }) ?? []
        let roots = hostPathNaming.map { (mount: $0.key, root: Self.standardized($0.value.hostPath(of: .root(of: $0.key)))) }
        return entries.compactMap { entry in
            guard let hostPath = RecentFiles.hostPath(ofURI: entry.uri) else { return nil }
            var path: VirtualPath?
            for (mount, root) in roots where hostPath.hasPrefix(root + "/") {
                let inside = hostPath.dropFirst(root.count + 1).split(separator: "/").map(String.init)
                path = inside.reduce(VirtualPath.root(of: mount)) { $0.appending(trustedName: $1) }
            }
            return RecentFile(path: path, hostPath: hostPath, used: entry.used, mimeType: entry.mimeType)
        }
    }
}
