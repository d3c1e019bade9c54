import CCofferSystem
import CofferCore
public import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The user's desktop trash, where what an export replaces on the host goes (never deleted).
///
/// Which trash follows the freedesktop.org Trash specification: the home trash
/// (`$XDG_DATA_HOME/Trash`) for an item on the same file system as it; otherwise the
/// trash at the top of the item's own volume, `$topdir/.Trash/$uid` when the volume's
/// administrator made `.Trash` (a sticky folder, not a link), else `$topdir/.Trash-$uid`.
/// An item is moved there by a rename, so it never crosses a file system.
public struct HostTrash: Sendable {
    let directories: BaseDirectories

    public init(directories: BaseDirectories = BaseDirectories()) {
        self.directories = directories
    }

    /// Moves `name` in the host folder `folder` to the trash of its volume.
    /// - Returns: the trash's folder and the item's ID in it.
    /// - Throws: when no trash on the item's file system can be used; the item stays.
    /// `entry` names it in the folder when that is not `name` (a copy of `name` under a
    /// temporary name, trashed as `name`).
    func put(_ name: String, entry: String? = nil, in folder: HostItem) throws(CofferError) -> (trash: String, id: String) {
        let hostPath = folder.path == "/" ? "/" + name : folder.path + "/" + name
        var info = stat()
        guard fstat(folder.descriptor.raw, &info) == 0 else { throw CofferError.lastSystemError("fstat", path: nil) }
        for candidate in try candidates(forDevice: UInt64(info.st_dev), folderPath: folder.path) {
            guard let trash = try? TrashBackend(path: candidate, mountName: "host-trash") else { continue }
            if let id = try trash.putHostItem(named: name, entry: entry, in: folder.descriptor.raw, hostPath: hostPath) {
                return (candidate, id)
            }
        }
        throw CofferError(.unsupported, detail: "no-host-trash")
    }

    /// The trashes to try for an item on `device` in `folderPath`, best first.
    private func candidates(forDevice device: UInt64, folderPath: String) throws(CofferError) -> [String] {
        let home = directories.dataHome + "/Trash"
        if let homeDevice = Self.deviceOfFolder(making: home), homeDevice == device { return [home] }
        guard let top = Self.topDirectory(of: folderPath, device: device) else { return [] }
        let uid = String(getuid())
        var found: [String] = []
        let shared = (top == "/" ? "" : top) + "/.Trash"
        var info = stat()
        if lstat(shared, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, (info.st_mode & S_ISVTX) != 0,
           Self.deviceOfFolder(making: shared + "/" + uid) == device {
            found.append(shared + "/" + uid)
        }
        let own = (top == "/" ? "" : top) + "/.Trash-" + uid
        if Self.deviceOfFolder(making: own) == device { found.append(own) }
        return found
    }

    /// The device of the folder at `path`, made (mode 0700, parents too) when missing;
    /// `nil` when it cannot be made or is not a folder.
    private static func deviceOfFolder(making path: String) -> UInt64? {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                            attributes: [.posixPermissions: 0o700])) != nil,
                  lstat(path, &info) == 0 else { return nil }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return UInt64(info.st_dev)
    }

    /// The top folder of the volume `path` is on: the last folder up from it on `device`.
    private static func topDirectory(of path: String, device: UInt64) -> String? {
        var top = path
        while top != "/" {
            let parent = (top as NSString).deletingLastPathComponent
            var info = stat()
            guard stat(parent.isEmpty ? "/" : parent, &info) == 0 else { return nil }
            if UInt64(info.st_dev) != device { break }
            top = parent.isEmpty ? "/" : parent
        }
        return top
    }
}
