import Foundation
import Synchronization

/// The names of Coffer's unfinished results: a file being written, a folder being copied,
/// an information file being filled.
///
/// A partial is a hidden entry named `.coffer-partial-OOOOOOOO-SSSS…`: the prefix, eight
/// hexadecimal digits naming the process that made it (its ``owner``) and a serial number.
/// Only that exact shape is Coffer's. Listings, copies, exports and watches leave such
/// entries out, and no name of that shape can be given to anything (``FileName`` refuses
/// it as reserved), so a user's own file is never mistaken for one: `.coffer-partial-notes`
/// is an ordinary hidden file. The owner part is what start-up recovery goes by: the
/// partials of a process that is gone are removed, those of a running one are not.
public enum PartialName {
    /// What every partial's name begins with.
    public static let prefix = ".coffer-partial-"

    /// This process's mark in the partials it makes.
    public static let owner: String = {
        var generator = SystemRandomNumberGenerator()
        return hex(UInt64(UInt32.random(in: .min ... .max, using: &generator)), digits: 8)
    }()

    private static let serial = Atomic<UInt64>(0)

    /// A fresh name, never made before by this process.
    public static func make() -> String {
        let number = serial.add(1, ordering: .relaxed).newValue
        return prefix + owner + "-" + String(number, radix: 16)
    }

    /// Whether `name` has the exact shape of a partial (by any process).
    public static func isPartial(_ name: String) -> Bool { ownerOf(name) != nil }

    /// The owner part of a partial's name; `nil` when `name` is not a partial.
    public static func ownerOf(_ name: String) -> Substring? {
        let bytes = name.utf8
        let prefixCount = 16
        // prefix, 8 owner digits, "-", 1 to 16 serial digits
        guard bytes.count >= prefixCount + 10, bytes.count <= prefixCount + 25,
              bytes.first == UInt8(ascii: "."), name.hasPrefix(prefix) else { return nil }
        var index = 0
        for byte in bytes {
            defer { index += 1 }
            if index < prefixCount { continue }
            if index == prefixCount + 8 {
                if byte != UInt8(ascii: "-") { return nil }
            } else if !isLowercaseHexDigit(byte) {
                return nil
            }
        }
        let start = name.utf8.index(name.utf8.startIndex, offsetBy: prefixCount)
        let end = name.utf8.index(start, offsetBy: 8)
        return Substring(name.utf8[start..<end])
    }

    private static func isLowercaseHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
