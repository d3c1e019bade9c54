public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The contents of a `.trashinfo` file (freedesktop.org Trash specification 1.0).
///
/// ```
/// [Trash Info]
/// Path=/home/me/container/Documents/UserFiles/My%20Notes
/// DeletionDate=2026-11-29T15:16:33
/// X-Coffer-Path=files:/My%20Notes
/// ```
///
/// `Path` is the original location, percent-encoded as in a URI; `DeletionDate` is local
/// time without a zone. `X-Coffer-Path` is Coffer's own key (readers of the spec ignore
/// keys they do not know): the virtual path, so restore works even after the container
/// folder has moved.
///
/// The local trash and the trash kept in a bucket (`CofferS3`) both write and read them here.
public struct TrashInfo: Equatable, Sendable {
    /// The original location: a host path, or for a bucket's trash the object key.
    public var path: String
    /// When the item was trashed, if the file says.
    public var deletionDate: Date?
    /// The virtual path the item had (`X-Coffer-Path`), if the file says.
    public var virtualPath: VirtualPath?

    static let header = "[Trash Info]"
    /// The extension of an information file's name.
    public static let suffix = ".trashinfo"

    /// The start of an item's ID in a trash: its name, cut (on a character) so that the
    /// information file's name — the ID, a ` (N)` a clash may add, and ``suffix`` — stays
    /// within 255 bytes.
    public static func idBase(for name: String) -> String {
        FileName.prefix(of: name, fittingIn: FileName.maximumByteCount - suffix.utf8.count - 12)
    }
    static let virtualPathKey = "X-Coffer-Path"

    /// The file's text.
    public var text: String {
        var lines = [Self.header, "Path=\(Self.percentEncoded(path))"]
        if let deletionDate { lines.append("DeletionDate=\(Self.format(deletionDate))") }
        if let virtualPath { lines.append("\(Self.virtualPathKey)=\(Self.percentEncoded(virtualPath.description))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads an info file's text; `nil` when it has no `[Trash Info]` group or no `Path`.
    public init?(parsing text: String) {
        var inGroup = false
        var values: [String: String] = [:]
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inGroup = line == Self.header
                continue
            }
            guard inGroup, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            if values[key] == nil { values[key] = String(line[line.index(after: equals)...]) }
        }
        guard let encoded = values["Path"], let path = Self.percentDecoded(encoded), !path.isEmpty else { return nil }
        self.path = path
        deletionDate = values["DeletionDate"].flatMap(Self.parse)
        virtualPath = values[Self.virtualPathKey].flatMap(Self.percentDecoded).flatMap { try? VirtualPath(parsing: $0) }
    }

    /// Information about an item trashed from `path`.
    public init(path: String, deletionDate: Date?, virtualPath: VirtualPath?) {
        self.path = path
        self.deletionDate = deletionDate
        self.virtualPath = virtualPath
    }

    // MARK: Encoding

    /// Escapes every byte but unreserved ASCII (`A–Z a–z 0–9 - . _ ~`) and `/`, as `%XX`.
    public static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                result.append(byte)
            default:
                result += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Undoes `%XX` escapes; `nil` for a bad escape or bytes that are not UTF-8.
    public static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    // MARK: Dates

    /// `2026-11-29T15:16:33` in local time.
    public static func format(_ date: Date) -> String { Timestamp.local(date) }

    /// Reads `YYYY-MM-DDThh:mm:ss` as local time.
    static func parse(_ text: String) -> Date? {
        let fields = text.split(whereSeparator: { "-T:".contains($0) }).map { Int32($0) }
        guard fields.count == 6, fields.allSatisfy({ $0 != nil }) else { return nil }
        var parts = tm()
        parts.tm_year = fields[0]! - 1900
        parts.tm_mon = fields[1]! - 1
        parts.tm_mday = fields[2]!
        parts.tm_hour = fields[3]!
        parts.tm_min = fields[4]!
        parts.tm_sec = fields[5]!
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        guard seconds != -1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
