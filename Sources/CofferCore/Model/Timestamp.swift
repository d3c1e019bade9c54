public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How Coffer writes a moment for programs: ISO 8601 in UTC with milliseconds
/// (`2026-12-01T07:40:28.123Z`), in JSON-RPC results and in the audit log alike.
///
/// Written with `gmtime_r` and integer formatting rather than `Date.ISO8601FormatStyle`:
/// a `files/stat` answer holds one or two dates, and the format style cost more than the
/// `statx` behind them. The milliseconds are truncated, as the format style truncates.
public enum Timestamp {
    /// `date` in UTC as ISO 8601 with milliseconds: `2026-03-01T09:30:00.125Z`.
    public static func iso8601(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        write(date, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A moment in local time to the second: `2026-11-29T15:16:33`, or with another
    /// `separator` between the date and the time (`2026-11-29 15:16:33`, as messages show it).
    public static func local(_ date: Date, separator: String = "T") -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))\(separator)"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// Appends the text (without quotes) to `bytes`.
    public static func write(_ date: Date, into bytes: inout [UInt8]) {
        let time = date.timeIntervalSince1970
        let whole = time.rounded(.down)
        // A `Date` holds a time of today to about a quarter of a microsecond; a nudge of a
        // tenth of one keeps `.999` from reading as `.998999…`.
        let millis = min(999, Int(((time - whole) * 1000 + 1e-4).rounded(.down)))
        var seconds = time_t(whole)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        digits(Int(parts.tm_year) + 1900, 4, &bytes)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2, &bytes)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2, &bytes)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2, &bytes)
        bytes.append(UInt8(ascii: "."))
        digits(millis, 3, &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The same moment to the second in ISO 8601's basic format (`20150830T123600Z`), as
    /// AWS Signature Version 4 dates a request.
    public static func basic(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        digits(Int(parts.tm_year) + 1900, 4, &bytes)
        digits(Int(parts.tm_mon) + 1, 2, &bytes)
        digits(Int(parts.tm_mday), 2, &bytes)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2, &bytes)
        digits(Int(parts.tm_min), 2, &bytes)
        digits(Int(parts.tm_sec), 2, &bytes)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func digits(_ value: Int, _ count: Int, _ bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = max(0, value)
        if rest >= divisor * 10 {  // years past 9999: all their digits
            for character in String(rest).utf8 { bytes.append(character) }
            return
        }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
