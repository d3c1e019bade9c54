import Foundation

/// How Coffer writes a moment for programs: ISO 8601 in UTC with milliseconds
/// (`2026-12-01T07:40:28.123Z`), in JSON-RPC results and in the audit log alike.
public enum Timestamp {
    public static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
