import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How the REPL writes sizes, dates and names.
enum Formatting {
    /// `512 B`, `1.2 KB`, `34 MB` (decimal units, as file browsers show them).
    static func size(_ bytes: Int64) -> String { SizeText.decimal(bytes) }

    /// `2026-11-29 13:47` in local time.
    static func date(_ date: Date) -> String {
        let parts = localParts(date)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
    }

    /// ``date(_:)`` for many dates in a row: files of one folder mostly share their minute,
    /// so each minute is formatted once.
    struct MinuteCache {
        private var minute = Int64.min
        private var text = ""

        mutating func date(_ date: Date) -> String {
            let current = Int64((date.timeIntervalSince1970 / 60).rounded(.down))
            if current != minute {
                minute = current
                text = Formatting.date(date)
            }
            return text
        }
    }

    /// `2026-11-29 13:47:05` in local time.
    static func dateWithSeconds(_ date: Date) -> String {
        let parts = localParts(date)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    private static func localParts(_ date: Date) -> tm {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return parts
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Columns a string takes on a terminal (East Asian wide characters take two).
    static func width(_ text: String) -> Int {
        var width = 0
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x1100 { width += 1; continue }
            let wide = (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value)
                || (0xAC00...0xD7A3).contains(value) || (0xF900...0xFAFF).contains(value)
                || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
                || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1F64F).contains(value)
                || (0x20000...0x3FFFD).contains(value)
            width += wide ? 2 : (scalar.properties.generalCategory == .nonspacingMark ? 0 : 1)
        }
        return width
    }

    /// Text from inside a file (its first lines, an archive's entry names) made safe to show:
    /// control characters, which could steer the terminal, become their visible symbols
    /// (ESC as ␛), and a tab a space.
    static func visible(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09: result.append(" ")
            case 0x00..<0x20: result.append(Unicode.Scalar(0x2400 + scalar.value)!)
            case 0x7F: result.append("\u{2421}")
            case 0x80..<0xA0: result.append("\u{FFFD}")
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    static func padded(_ text: String, to columns: Int) -> String {
        let missing = columns - width(text)
        return missing > 0 ? text + String(repeating: " ", count: missing) : text
    }

    static func leftPadded(_ text: String, to columns: Int) -> String {
        let missing = columns - width(text)
        return missing > 0 ? String(repeating: " ", count: missing) + text : text
    }

    /// A short kind column: `folder`, `package`, `link`, or the type's name (`typeName`
    /// gives it: “Gzip archive”, not `org.gnu.gnu-zip-archive`).
    static func kind(_ node: FileNode, typeName: (String) -> String = { $0 }) -> String {
        if let special = node.special {
            switch special {
            case .symbolicLink: return "link -> \(node.linkTarget ?? "?")"
            case .fifo: return "fifo"
            case .socket: return "socket"
            case .device: return "device"
            }
        }
        switch node.kind {
        case .folder: return typeName(FileType.Identifier.folder)
        case .package: return typeName(node.typeIdentifier)
        case .file: return typeName(node.typeIdentifier)
        }
    }
}
