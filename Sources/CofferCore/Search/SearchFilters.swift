public import Foundation

/// What a search narrows its matches to besides their names: when they changed, how big they
/// are, which tags they carry. Every front end parses the same words (``parseDate(_:now:)``,
/// ``parseSize(_:)``), so `find --newer 7d`, RPC's `newer: "7d"` and MCP's agree.
public struct SearchFilters: Sendable, Hashable {
    /// Changed at or after this moment (`--newer`).
    public var modifiedAfter: Date?
    /// Changed before this moment (`--older`).
    public var modifiedBefore: Date?
    /// At least this many bytes (`--larger`): files only.
    public var minimumSize: Int64?
    /// Fewer than this many bytes (`--smaller`): files only.
    public var maximumSize: Int64?
    /// Tags a match must carry, every one of them (`--tag`).
    public var tags: [String]

    /// Filters that each leave out what does not match; `nil` and empty filter nothing.
    public init(modifiedAfter: Date? = nil, modifiedBefore: Date? = nil, minimumSize: Int64? = nil,
                maximumSize: Int64? = nil, tags: [String] = []) {
        self.modifiedAfter = modifiedAfter
        self.modifiedBefore = modifiedBefore
        self.minimumSize = minimumSize
        self.maximumSize = maximumSize
        self.tags = tags
    }

    /// The filters as every front end's words give them: times for `newer` and `older`
    /// (``parseDate(_:now:)``), sizes for `larger` and `smaller` (``parseSize(_:)``).
    public init(newer: String?, older: String?, larger: String?, smaller: String?, tags: [String]) throws(CofferError) {
        self.init(tags: tags)
        modifiedAfter = try newer.map { (text) throws(CofferError) in try Self.parseDate(text) }
        modifiedBefore = try older.map { (text) throws(CofferError) in try Self.parseDate(text) }
        minimumSize = try larger.map { (text) throws(CofferError) in try Self.parseSize(text) }
        maximumSize = try smaller.map { (text) throws(CofferError) in try Self.parseSize(text) }
    }

    /// No filter at all.
    public var isEmpty: Bool {
        modifiedAfter == nil && modifiedBefore == nil && minimumSize == nil && maximumSize == nil && tags.isEmpty
    }

    /// Whether `node` passes the date and size filters (tags are read apart, from storage).
    public func admits(_ node: FileNode) -> Bool {
        if let after = modifiedAfter, node.modificationDate < after { return false }
        if let before = modifiedBefore, node.modificationDate >= before { return false }
        if minimumSize != nil || maximumSize != nil {
            // A size filter asks about content: folders, links and devices have none.
            guard let size = node.contentSize else { return false }
            if let minimum = minimumSize, size < minimum { return false }
            if let maximum = maximumSize, size >= maximum { return false }
        }
        return true
    }

    /// A moment as the filters take it: a duration back from `now` (`30m`, `12h`, `7d`,
    /// `2w`), a day (`2026-11-01`, its local midnight), or an ISO 8601 time
    /// (`2026-11-01T08:00:00Z`).
    public static func parseDate(_ text: String, now: Date = Date()) throws(CofferError) -> Date {
        if let span = parseDuration(text) { return now.addingTimeInterval(-span) }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.dateFormat = "yyyy-MM-dd"
        if text.count == 10, let date = day.date(from: text) { return date }
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = fractional.date(from: text) { return date }
        throw CofferError(.invalidArgument, detail: "“\(text)” is not a time: use 30m, 12h, 7d, 2w, 2026-11-01 or an ISO 8601 time")
    }

    /// A span of time written `30m`, `12h`, `7d` or `2w` (not negative), in seconds; `nil` for
    /// anything else.
    public static func parseDuration(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["m": 60, "h": 3600, "d": 86400, "w": 7 * 86400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Double(text.dropLast()), count >= 0 else { return nil }
        return count * unit
    }

    /// A size as the filters take it: bytes, or with `K`, `M`, `G`, `T` (powers of 1024, as
    /// `find -size` and `du` count; `KB`, `KiB` and lower case too).
    public static func parseSize(_ text: String) throws(CofferError) -> Int64 {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        var scale: Int64 = 1
        let suffixes: [(String, Int64)] = [("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("tib", 1 << 40),
                                           ("kb", 1 << 10), ("mb", 1 << 20), ("gb", 1 << 30), ("tb", 1 << 40),
                                           ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("t", 1 << 40), ("b", 1)]
        for (suffix, value) in suffixes where digits.lowercased().hasSuffix(suffix) {
            digits = digits.dropLast(suffix.count)
            scale = value
            break
        }
        guard let number = Double(digits), number >= 0, number * Double(scale) < 9.0e18 else {
            throw CofferError(.invalidArgument, detail: "“\(text)” is not a size: use bytes, or 10K, 10M, 1.5G")
        }
        return Int64((number * Double(scale)).rounded())
    }
}
