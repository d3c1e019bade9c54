import CofferDesktop
import CofferBackends
public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Favourites (`Favourite`), kept in a JSON file (`AppData/favourites.json` in a standard
/// container); host folders marked for the desktop also in GTK's bookmarks
/// (`$XDG_CONFIG_HOME/gtk-3.0/bookmarks`). A favourite in a mount follows the item when
/// Coffer moves or renames it.
public final class Favourites: ItemMoveObserver {
    private let store: JSONListStore<Favourite>

    /// Favourites kept in the JSON file at `path`.
    public init(path: String) {
        store = JSONListStore(path: path, label: "favourites")
    }

    /// Every favourite, oldest first, each checked: one that vanished is marked missing.
    func list(in service: FileService, policy: HostAccessPolicy) async throws(CofferError) -> [FavouriteStatus] {
        let favourites = try await BlockingIO.run { [store] _ throws(CofferError) in store.load() }
        var statuses: [FavouriteStatus] = []
        for favourite in favourites {
            if favourite.isHost {
                var isFolder: ObjCBool = false
                let exists = FileManager.default.fileExists(atPath: favourite.location, isDirectory: &isFolder)
                statuses.append(FavouriteStatus(favourite: favourite, isMissing: !exists, isFolder: exists ? isFolder.boolValue : nil))
            } else {
                let node = try? await service.stat(try VirtualPath(parsing: favourite.location))
                statuses.append(FavouriteStatus(favourite: favourite, isMissing: node == nil, isFolder: node.map { $0.kind != .file }))
            }
        }
        return statuses
    }

    /// Marks an item of a mount (it must be there).
    func add(_ path: VirtualPath, in service: FileService) async throws(CofferError) -> Favourite {
        _ = try await service.stat(path)
        return try await remember(Favourite(location: path.description, isHost: false))
    }

    /// Marks a folder of this computer, reached through `policy`; with `desktop`, adds it to
    /// GTK's bookmarks too (once).
    func addHost(_ hostPath: String, desktop: Bool, policy: HostAccessPolicy,
                          directories: BaseDirectories) async throws(CofferError) -> Favourite {
        let folder = try await BlockingIO.run { _ throws(CofferError) in try policy.open(hostPath) }
        guard folder.isFolder else { throw CofferError(.notADirectory, detail: folder.name) }
        if desktop {
            try await BlockingIO.run { _ throws(CofferError) in
                try DesktopBookmarks(directories: directories).add(folder.path)
            }
        }
        return try await remember(Favourite(location: folder.path, isHost: true, onDesktop: desktop))
    }

    /// A favourite follows an item Coffer moves or renames (and the favourites below a folder
    /// moved): best effort, never failing the move. (One moved by another program is shown
    /// missing, as the desktop's bookmarks are.)
    public func itemMoved(from source: VirtualPath, to destination: VirtualPath, in service: FileService) async {
        guard !source.isRoot else { return }
        let (old, new) = (source.description, destination.description)
        let follows: @Sendable (Favourite) -> Bool = { favourite in !favourite.isHost && (favourite.location == old || favourite.location.hasPrefix(old + "/")) }
        _ = try? await BlockingIO.run { [store] _ throws(CofferError) in
            // Most moves touch no favourite: looked at first, without the lock.
            guard store.load().contains(where: follows) else { return }
            try store.update { favourites throws(CofferError) in
                for index in favourites.indices where !favourites[index].isHost {
                    let location = favourites[index].location
                    if location == old {
                        favourites[index].location = new
                    } else if location.hasPrefix(old + "/") {
                        favourites[index].location = new + location.dropFirst(old.count)
                    }
                }
            }
        }
    }

    /// Forgets a favourite (by its location as listed); the item itself is not touched. A host
    /// folder written to the desktop's bookmarks leaves them too.
    func remove(_ location: String, directories: BaseDirectories) async throws(CofferError) {
        let removed = try await BlockingIO.run { [store] _ throws(CofferError) -> Favourite in
            try store.update { favourites throws(CofferError) -> Favourite in
                guard let index = favourites.firstIndex(where: { $0.location == location }) else {
                    throw CofferError(.noSuchFile, detail: "favourite \(location)")
                }
                return favourites.remove(at: index)
            }
        }
        if removed.onDesktop {
            try await BlockingIO.run { _ throws(CofferError) in
                try DesktopBookmarks(directories: directories).remove(removed.location)
            }
        }
    }

    private func remember(_ favourite: Favourite) async throws(CofferError) -> Favourite {
        try await BlockingIO.run { [store] _ throws(CofferError) -> Favourite in
            try store.update { favourites throws(CofferError) -> Favourite in
                if let index = favourites.firstIndex(where: { $0.location == favourite.location }) {
                    // Marked again: kept where it was, and on the desktop if either asked.
                    favourites[index].onDesktop = favourites[index].onDesktop || favourite.onDesktop
                    return favourites[index]
                }
                favourites.append(favourite)
                return favourite
            }
        }
    }
}
