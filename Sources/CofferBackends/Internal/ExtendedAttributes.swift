import CCofferSystem
#if canImport(Glibc)
import Glibc
#endif

/// The extended attributes of open files: listed, read, and carried from one file to
/// another, as copies, imports and exports carry a file's tags (`user.xdg.tags`), origin
/// (`user.xdg.origin.url`), comment (`user.xdg.comment`) and backup flag.
enum ExtendedAttributes {
    /// Every attribute name of the open file (of any namespace the account may list).
    static func names(of fd: Int32) -> [String] {
        let size = coffer_flistxattr(fd, nil, 0)
        guard size > 0 else { return [] }
        var list = [CChar](repeating: 0, count: size)
        let count = coffer_flistxattr(fd, &list, list.count)
        guard count > 0 else { return [] }
        return list[..<count].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    /// The value of `name` on the open file, `nil` when it has none.
    static func value(of name: String, fd: Int32) -> [UInt8]? {
        var size = coffer_fgetxattr(fd, name, nil, 0)
        guard size >= 0 else { return nil }
        var value = [UInt8](repeating: 0, count: max(1, size))
        size = value.withUnsafeMutableBytes { coffer_fgetxattr(fd, name, $0.baseAddress, $0.count) }
        return size >= 0 ? Array(value[..<size]) : nil
    }

    /// Sets `name` on the open file. Returns the errno on failure.
    @discardableResult
    static func set(_ name: String, to value: [UInt8], fd: Int32) -> Int32 {
        value.withUnsafeBytes { coffer_fsetxattr(fd, name, $0.baseAddress, $0.count, 0) } == 0 ? 0 : errno
    }

    /// Gives `target` the `user.` attributes of `source`.
    /// - Returns: the names that could not be set (a file system without user attributes).
    @discardableResult
    static func copyUserAttributes(from source: Int32, to target: Int32) -> [String] {
        var lost: [String] = []
        for name in names(of: source) where name.hasPrefix("user.") {
            guard let value = value(of: name, fd: source) else { continue }
            if set(name, to: value, fd: target) != 0 { lost.append(name) }
        }
        return lost
    }
}
