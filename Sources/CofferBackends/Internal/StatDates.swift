import CCofferSystem
import CofferCore
import Foundation

extension coffer_stat {
    /// The modification time as a `Date`.
    var modificationDate: Date {
        Date(timeIntervalSince1970: Double(mtime_sec) + Double(mtime_nsec) / 1e9)
    }
}

extension coffer_stat {
    /// The version of the content this `statx` describes (``FileVersion``).
    var version: FileVersion {
        FileVersion(device: device, inode: inode, size: size, modified: (mtime_sec, mtime_nsec),
                    changed: (ctime_sec, ctime_nsec))
    }
}
