import Foundation
import Synchronization

/// Counts a share's wrong passwords per client, and makes the client wait past five
/// (a minute, doubling up to an hour): ``UnlockShare`` asks it, for every front end.
final class ShareAttempts: Sendable {
    private struct Record { var failures = 0; var until = Date.distantPast }
    private let records = Mutex<[String: Record]>([:])

    /// Seconds to wait before the next try, or `nil` when a try may be made now.
    func wait(for key: String, now: Date = Date()) -> Int? {
        records.withLock { records in
            guard let record = records[key], record.until > now else { return nil }
            return Int(record.until.timeIntervalSince(now).rounded(.up))
        }
    }

    func failed(_ key: String, now: Date = Date()) {
        records.withLock { records in
            var record = records[key] ?? Record()
            record.failures += 1
            if record.failures >= 5 {
                record.until = now.addingTimeInterval(min(3600, 60 * pow(2, Double(record.failures - 5))))
            }
            records[key] = record
            // Bounded: the oldest lockouts go first when many clients fail.
            if records.count > 10_000, let oldest = records.min(by: { $0.value.until < $1.value.until })?.key {
                records[oldest] = nil
            }
        }
    }

    func succeeded(_ key: String) { records.withLock { $0[key] = nil } }
}
