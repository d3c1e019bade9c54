/// A rule that recognises a type by its content, as shared-mime-info writes one: `value`
/// found at `offset` (or anywhere a range of offsets allows). A declared type's rules go into
/// its MIME package for the desktop, and into the registry for Coffer's own judging, so both
/// recognise the same files.
public struct ContentMagic: Codable, Sendable, Hashable {
    /// `string` (the default), `byte`, `big16`, `big32`, `little16`, `little32`, `host16`, `host32`.
    public var type: String
    /// Where the value starts: a byte offset, or a range `"0:64"` of them.
    public var offset: String
    /// For `string`, text with shared-mime-info's escapes (`\x89`, `\0`, `\n`, `\\`); for the
    /// numbers, decimal, `0x` hex or `0` octal.
    public var value: String

    /// Every value ``type`` may take.
    public static let types = ["string", "byte", "big16", "big32", "little16", "little32", "host16", "host32"]

    /// A rule that finds `value` at `offset`.
    public init(type: String = "string", offset: String = "0", value: String) {
        (self.type, self.offset, self.value) = (type, offset, value)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decodeIfPresent(String.self, forKey: .type) ?? "string"
        if let number = try? container.decode(Int.self, forKey: .offset) {
            offset = String(number)
        } else {
            offset = try container.decodeIfPresent(String.self, forKey: .offset) ?? "0"
        }
        value = try container.decode(String.self, forKey: .value)
    }

    /// The offsets the value may start at; `nil` when `offset` is not one or a range.
    public var offsets: ClosedRange<Int>? {
        let bounds = offset.split(separator: ":", omittingEmptySubsequences: false).map { part -> Int? in
            part.allSatisfy(\.isASCII) ? Int(part) : nil
        }
        guard (1...2).contains(bounds.count), let start = bounds.first ?? nil, let end = bounds.last ?? nil,
              start >= 0, end >= start else { return nil }
        return start...end
    }

    /// The bytes sought; `nil` when `type` is unknown, a number is malformed or too big for its
    /// width, or the value is empty.
    public var bytes: [UInt8]? {
        let width: Int
        let bigEndian: Bool
        switch type {
        case "string":
            let decoded = Self.unescaped(value)
            return decoded.isEmpty ? nil : decoded
        case "byte": (width, bigEndian) = (1, true)
        case "big16": (width, bigEndian) = (2, true)
        case "big32": (width, bigEndian) = (4, true)
        case "little16": (width, bigEndian) = (2, false)
        case "little32": (width, bigEndian) = (4, false)
        case "host16": (width, bigEndian) = (2, 1.bigEndian == 1)
        case "host32": (width, bigEndian) = (4, 1.bigEndian == 1)
        default: return nil
        }
        guard let number = Self.number(value), number < UInt64(1) << (8 * width) else { return nil }
        let little = (0..<width).map { UInt8(truncatingIfNeeded: number >> (8 * $0)) }
        return bigEndian ? little.reversed() : little
    }

    /// How many leading bytes of a file this rule can look at.
    public var reach: Int {
        guard let offsets, let bytes else { return 0 }
        return offsets.upperBound + bytes.count
    }

    /// Whether the file whose first bytes are `sample` matches (a sample shorter than
    /// ``reach`` is judged on what it holds, as for a short file).
    public func matches(_ sample: [UInt8]) -> Bool {
        guard let offsets, let bytes, sample.count >= offsets.lowerBound + bytes.count else { return false }
        let last = min(offsets.upperBound, sample.count - bytes.count)
        return sample.withUnsafeBufferPointer { buffer in
            (offsets.lowerBound...last).contains { start in
                bytes.indices.allSatisfy { buffer[start + $0] == bytes[$0] }
            }
        }
    }

    /// A number as C's `strtoul` with base 0 reads it: `0x1F`, `017`, `31`.
    static func number(_ text: String) -> UInt64? {
        if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt64(text.dropFirst(2), radix: 16) }
        if text.count > 1, text.hasPrefix("0") { return UInt64(text.dropFirst(), radix: 8) }
        return UInt64(text, radix: 10)
    }

    /// A string value's bytes: UTF-8, with `\xHH`, octal `\NNN` (and `\0`), `\n`, `\r`, `\t`,
    /// `\b`, `\f`, `\v` decoded, and any other escaped character standing for itself.
    static func unescaped(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        func digits(_ limit: Int, radix: UInt8, _ isDigit: (UInt8) -> Bool) -> UInt8? {
            var value = 0, count = 0
            while count < limit, let next = input.first, isDigit(next) {
                value = value * Int(radix) + Int(hexValue(next))
                input.removeFirst()
                count += 1
            }
            return count == 0 ? nil : UInt8(truncatingIfNeeded: value)
        }
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "\\"), let escaped = input.first else {
                bytes.append(byte)
                continue
            }
            switch escaped {
            case UInt8(ascii: "x"):
                input.removeFirst()
                bytes.append(digits(2, radix: 16) { hexValue($0) < 16 } ?? UInt8(ascii: "x"))
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                bytes.append(digits(3, radix: 8) { (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) } ?? 0)
            default:
                input.removeFirst()
                let controls: [UInt8: UInt8] = [UInt8(ascii: "n"): 10, UInt8(ascii: "r"): 13, UInt8(ascii: "t"): 9,
                                                UInt8(ascii: "b"): 8, UInt8(ascii: "f"): 12, UInt8(ascii: "v"): 11]
                bytes.append(controls[escaped] ?? escaped)
            }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: 255
        }
    }
}
