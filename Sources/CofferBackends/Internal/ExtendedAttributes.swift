import CCofferSystem
import CofferCore
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

    /// The `user.` attributes of the open file or folder.
    static func userAttributes(of fd: Int32) -> UserAttributes {
        var attributes: UserAttributes = [:]
        for name in names(of: fd) where name.hasPrefix("user.") {
            if let value = value(of: name, fd: fd) { attributes[name] = value }
        }
        return attributes
    }

    /// Sets `attributes` on the open file or folder.
    /// - Returns: those it could not keep, with why (a file system without user attributes
    ///   answers `ENOTSUP`; one without room for a value, `E2BIG` or `ENOSPC`).
    static func setUserAttributes(_ attributes: UserAttributes, on fd: Int32) -> [LostAttribute] {
        var lost: [LostAttribute] = []
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            switch set(name, to: value, fd: fd) {
            case 0: continue
            case E2BIG, ENOSPC, ERANGE: lost.append(LostAttribute(name, .tooLarge))
            default: lost.append(LostAttribute(name, .unsupported))
            }
        }
        return lost
    }

    /// Gives `target` the `user.` attributes of `source`, reporting those it could not keep
    /// as attributes of `item` (the item copied, as the caller named it).
    static func copyUserAttributes(from source: Int32, to target: Int32, reportingAs item: @autoclosure () -> String) {
        let attributes = userAttributes(of: source)
        guard !attributes.isEmpty else { return }
        OperationWarnings.report(attributesOf: item(), lost: setUserAttributes(attributes, on: target))
    }
}
