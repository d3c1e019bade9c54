import CofferCore
import Foundation

/// `user.` attributes on S3 objects, as user metadata: `user.xdg.tags` is `x-amz-meta-xdg-tags`,
/// `user.xdg.origin.url` is `x-amz-meta-xdg-origin-url` — the name without `user.`, its dots
/// written as hyphens — so a file copied to a bucket and back keeps its tags, origin and comment.
///
/// What S3 cannot hold is reported, never dropped in silence (``LostAttribute``):
/// - a name S3 cannot give back as it was: metadata names are case-insensitive header names,
///   so only lowercase letters, digits, dots and underscores map both ways (a hyphen would
///   come back as a dot), and `mtime` is the object's own modification time;
/// - what does not fit in S3's 2 KB of user metadata (the bytes of every name and value,
///   the modification time's included): tags first, then by name, as long as they fit.
///
/// Values are US-ASCII, as S3 wants them; any other value (Chinese tags, binary) is one
/// RFC 2047 encoded word (`=?UTF-8?B?…?=`), as AWS suggests; read back either way.
enum S3Attributes {
    static let headerPrefix = "x-amz-meta-"
    /// S3's room for user metadata, in bytes of names and values.
    static let metadataLimit = 2048
    /// Coffer's own metadata name (the modification time, as rclone writes it): no attribute's.
    static let reserved: Set<String> = ["mtime"]

    /// The metadata name of an attribute, or `nil` when it has none that maps back.
    static func metadataName(of attribute: String) -> String? {
        guard attribute.hasPrefix("user.") else { return nil }
        let name = attribute.dropFirst(5)
        guard !name.isEmpty, name.utf8.allSatisfy({ byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }) else { return nil }
        let metadata = name.replacingOccurrences(of: ".", with: "-")
        return reserved.contains(metadata) ? nil : metadata
    }

    /// The headers that carry `attributes`, given `used` bytes already taken by other metadata,
    /// and the attributes left out.
    static func headers(for attributes: UserAttributes, besides used: Int) -> (headers: [(name: String, value: String)], lost: [LostAttribute]) {
        var headers: [(name: String, value: String)] = []
        var lost: [LostAttribute] = []
        var room = metadataLimit - used
        let ordered = attributes.sorted { first, second in
            let (firstIsTags, secondIsTags) = (first.key == FileTags.attribute, second.key == FileTags.attribute)
            return firstIsTags != secondIsTags ? firstIsTags : first.key < second.key
        }
        for (attribute, value) in ordered {
            guard let name = metadataName(of: attribute) else {
                lost.append(LostAttribute(attribute, .unnamable))
                continue
            }
            let text = encodedValue(value)
            let size = name.utf8.count + text.utf8.count
            guard size <= room else {
                lost.append(LostAttribute(attribute, .tooLarge))
                continue
            }
            room -= size
            headers.append(("X-Amz-Meta-" + name, text))
        }
        return (headers, lost)
    }

    /// The attributes an object's user metadata holds (Coffer's own entries left out).
    static func attributes(from metadata: [String: String]) -> UserAttributes {
        var attributes: UserAttributes = [:]
        for (name, value) in metadata where !reserved.contains(name) && !name.isEmpty {
            attributes["user." + name.replacingOccurrences(of: "-", with: ".")] = decodedValue(value)
        }
        return attributes
    }

    /// A value as S3 takes it: as it is when it is printable ASCII that a header keeps as it is
    /// (no space at either end, nothing that reads as an encoded word), else one encoded word.
    static func encodedValue(_ value: [UInt8]) -> String {
        let plain = value.allSatisfy { $0 >= 0x20 && $0 < 0x7F } && value.first != 0x20 && value.last != 0x20
            && !value.starts(with: Array("=?".utf8))
        if plain { return String(decoding: value, as: UTF8.self) }
        return "=?UTF-8?B?" + Data(value).base64EncodedString() + "?="
    }

    /// A metadata value's bytes: an encoded word decoded, anything else as it is.
    static func decodedValue(_ value: String) -> [UInt8] {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("=?utf-8?b?"), trimmed.hasSuffix("?="),
              let data = Data(base64Encoded: String(trimmed.dropFirst(10).dropLast(2)))
        else { return Array(value.utf8) }
        return Array(data)
    }
}
