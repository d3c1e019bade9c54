public import CofferCore
import CofferRuntime
public import Foundation

extension LocalSandboxBackend: TouchingBackend {
    public func touch(_ path: VirtualPath) async throws {
        try await BlockingIO.run { _ throws(CofferError) in
            guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
            let parent = try self.openParent(of: path)
            // Both times to now, on the entry itself (a link is touched, never followed).
            guard utimensat(parent.raw, path.name, nil, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw CofferError.lastSystemError("utimensat", path: path)
            }
        }
    }

    /// Sets the item's modification time to `date` (its access time to now), on the entry itself.
    public func setModificationDate(_ date: Date, at path: VirtualPath) async throws {
        try await BlockingIO.run { _ throws(CofferError) in
            guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
            let parent = try self.openParent(of: path)
            let seconds = date.timeIntervalSince1970.rounded(.down)
            let now = (1 << 30) - 1  // UTIME_NOW: the access time becomes now
            var times = [timespec(tv_sec: 0, tv_nsec: now),
                         timespec(tv_sec: time_t(seconds), tv_nsec: Int((date.timeIntervalSince1970 - seconds) * 1e9))]
            guard utimensat(parent.raw, path.name, &times, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw CofferError.lastSystemError("utimensat", path: path)
            }
        }
    }
}
