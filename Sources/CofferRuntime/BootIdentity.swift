import Foundation

/// Which boot of the machine this is (`/proc/sys/kernel/random/boot_id` on Linux).
///
/// Data written but never synced survives a crashed process in the page cache, but not a
/// restarted machine: what was written before is trusted up to its length only while the
/// machine has not restarted since. Where the system does not say (`nil`), nothing unsynced is
/// trusted.
public enum BootIdentity {
    public static let current: String? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }()
}
