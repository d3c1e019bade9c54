import Foundation
import Synchronization

/// The statuses of children reaped here rather than by Foundation, by process id.
private let reapedStatuses = Mutex<[Int32: Int32]>([:])

extension Process {
    /// The exit status, also of a child ``waitForExit()`` had to reap itself (Foundation's
    /// `terminationStatus` would stop the tests there: it never saw that child end).
    public var exitStatus: Int32 {
        reapedStatuses.withLock { $0[processIdentifier] } ?? terminationStatus
    }

    /// Waits until the process ended and returns its exit status (128 + the signal when one
    /// ended it).
    ///
    /// Foundation's `waitUntilExit()` once missed an exit in CI while many children ended at
    /// once: the child stayed a zombie nobody reaped and the test waited for ever. Every test
    /// waits through here instead: a child that has been a zombie for five seconds is reaped
    /// here, and its status read from `waitpid`.
    @discardableResult
    public func waitForExit() -> Int32 {
        let pid = processIdentifier
        var zombieSince: Date?
        while isRunning {
            if Self.isZombie(pid) {
                let since = zombieSince ?? Date()
                zombieSince = since
                if Date().timeIntervalSince(since) > 5 {
                    var status: Int32 = 0
                    if waitpid(pid, &status, WNOHANG) == pid {
                        // WIFEXITED and WEXITSTATUS, else the signal as a shell reports it.
                        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                        reapedStatuses.withLock { $0[pid] = code }
                        return code
                    }
                }
            }
            usleep(2000)
        }
        return terminationStatus
    }

    private static func isZombie(_ pid: Int32) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return false }
        return text[text.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
}
