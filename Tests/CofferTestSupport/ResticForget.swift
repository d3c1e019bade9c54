public import Foundation

/// What `restic forget --dry-run --json` (restic 0.14) says of one group of snapshots (one host,
/// one path): the oracle the versions' retention is checked against.
public struct ResticForget: Sendable {
    /// The snapshots kept, each with its reasons (restic's `matches`), in restic's order.
    public var kept: [(date: Date, reasons: [String])]
    /// The snapshots that would go.
    public var removed: [Date]

    /// Reads restic's answer; `nil` when it printed nothing (restic 0.14 prints no JSON for an
    /// empty policy).
    /// - Throws: ``HarnessError`` for an answer of several groups, a time it cannot read, or
    ///   reasons for only some kept snapshots.
    public static func read(_ output: Data) throws -> ResticForget? {
        struct Snapshot: Decodable { var time: String }
        struct Reason: Decodable {
            var snapshot: Snapshot
            var matches: [String]
        }
        struct Group: Decodable {
            var keep: [Snapshot]?
            var remove: [Snapshot]?
            var reasons: [Reason]?
        }
        guard !output.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") }) else { return nil }
        let groups = try JSONDecoder().decode([Group].self, from: output)
        guard let group = groups.first else { return nil }
        guard groups.count == 1 else { throw HarnessError("restic forget answered with \(groups.count) groups") }
        let reasons = group.reasons ?? []
        let keep = try (group.keep ?? []).map { try time($0.time) }
        let kept = try reasons.map { (date: try time($0.snapshot.time), reasons: $0.matches) }
        guard Set(keep) == Set(kept.map(\.date)) else { throw HarnessError("restic forget gave reasons for some kept snapshots only") }
        return ResticForget(kept: kept, removed: try (group.remove ?? []).map { try time($0.time) })
    }

    /// An ISO 8601 time with its zone (`Z` or an offset), with or without fractions of a second.
    public static func time(_ text: String) throws -> Date {
        let reader = ISO8601DateFormatter()
        if let date = reader.date(from: text) { return date }
        reader.formatOptions.insert(.withFractionalSeconds)
        if let date = reader.date(from: text) { return date }
        throw HarnessError("not an ISO 8601 time: \(text)")
    }
}
