import CCofferSystem
import Foundation

extension coffer_stat {
    /// The modification time as a `Date`.
    var modificationDate: Date {
        Date(timeIntervalSince1970: Double(mtime_sec) + Double(mtime_nsec) / 1e9)
    }
}
