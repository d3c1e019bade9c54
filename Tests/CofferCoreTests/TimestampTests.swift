import CofferCore
import Foundation
import Testing

/// The hand-written ISO 8601 text says what Foundation's format style says.
struct TimestampTests {
    @Test func agreesWithFoundationsFormatStyle() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let seconds = Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator)
            // Not within a microsecond of a millisecond boundary, where a Date's precision
            // leaves the millisecond to chance for any formatter.
            let nanoseconds = Int64.random(in: 0..<1000, using: &generator) * 1_000_000
                + Int64.random(in: 1000..<999_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
            let expected = date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            #expect(Timestamp.iso8601(date) == expected, "\(seconds) s \(nanoseconds) ns")
        }
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 1_764_612_345.999)) == "2025-12-01T18:05:45.999Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: -1.5)) == "1969-12-31T23:59:58.500Z")
    }
}
