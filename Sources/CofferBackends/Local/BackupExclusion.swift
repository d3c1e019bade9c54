import CCofferSystem
#if canImport(Glibc)
import Glibc
#endif

/// Per-item backup exclusion with the `user.xdg.robots.backup` extended attribute.
///
/// The freedesktop.org convention (also read by backup tools such as Déjà Dup) is that
/// `user.xdg.robots.backup=false` keeps an item out of backups. Folders full of rebuildable
/// data are marked with a `CACHEDIR.TAG` file instead (see ``CacheDirectoryTag``).
public enum BackupExclusion {
    public static let attribute = "user.xdg.robots.backup"

    /// Whether `name` in `folder` carries `user.xdg.robots.backup=false` (links are not followed).
    static func isExcluded(in folder: Descriptor, name: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { coffer_getxattr_at(folder.raw, name, attribute, $0.baseAddress, $0.count) }
        return count > 0 && Self.meansExcluded(buffer[..<count])
    }

    /// Whether the open file carries the exclusion.
    static func isExcluded(fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { coffer_fgetxattr(fd, attribute, $0.baseAddress, $0.count) }
        return count > 0 && Self.meansExcluded(buffer[..<count])
    }

    private static func meansExcluded(_ value: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: value, as: UTF8.self).trimmingCharacters(in: .init(charactersIn: "\0 \n"))
        return text.lowercased() == "false"
    }

    /// Marks or unmarks an open file or folder. Returns the errno on failure.
    @discardableResult
    static func set(_ excluded: Bool, fd: Int32) -> Int32 {
        if excluded {
            let value = Array("false".utf8)
            return value.withUnsafeBytes { coffer_fsetxattr(fd, attribute, $0.baseAddress, $0.count, 0) } == 0 ? 0 : errno
        }
        if coffer_fremovexattr(fd, attribute) == 0 || errno == ENODATA { return 0 }
        return errno
    }

    /// Marks `name` in `folder` when `excluded` (for carrying the flag over to a replacement).
    static func carry(_ excluded: Bool, to name: String, in folder: Descriptor) {
        guard excluded else { return }
        let fd = openat(folder.raw, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return }
        defer { _ = Glibc.close(fd) }
        set(true, fd: fd)
    }
}

import Foundation
