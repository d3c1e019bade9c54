import CCofferSystem
import CofferCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What describing an item reads besides its `statx`, kept so that describing it again
/// costs only that `statx`: its backup exclusion (an extended attribute) and its folder's
/// `.hidden` list.
///
/// Every entry is checked against the change time of what it came from before it is used:
/// an item's exclusion against the item's `ctime` (setting an attribute changes it), a
/// `.hidden` list against its folder's `mtime` and `ctime` (creating, removing or renaming
/// the file changes them) and, when the file exists, the file's own `ctime`, size and
/// inode. File systems keep those times on a coarse clock, so two changes a few
/// milliseconds apart can carry the same time: only what has not changed for a second is
/// kept, and anything younger is read every time, as before.
final class MetadataCache: Sendable {
    private struct Key: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private struct Stamp: Equatable {
        var seconds: Int64
        var nanoseconds: UInt32
        var size: UInt64 = 0
    }

    private struct HiddenEntry {
        var folder: Stamp
        var folderModified: Stamp
        /// The `.hidden` file's own stamp, `nil` when there was none.
        var file: Stamp?
        var list: HiddenList
    }

    private struct State {
        var exclusions: [Key: (Stamp, Bool)] = [:]
        var hiddenLists: [Key: HiddenEntry] = [:]
    }

    /// Shards by inode, so a listing read on every core does not queue on one lock.
    private final class Shard: Sendable {
        let state = Mutex(State())
    }
    private let shards = (0..<16).map { _ in Shard() }
    /// Entries of each kind kept at most, per shard; past it the shard starts again empty.
    static let capacity = 4096

    private func shard(_ key: Key) -> Shard { shards[Int(truncatingIfNeeded: key.inode) & 15] }
    /// How long something must have stayed unchanged to be kept.
    static let settledAfter: Int64 = 1

    /// Whether `name` in `folder`, whose `statx` is `info`, is excluded from backups.
    func isExcluded(in folder: Descriptor, name: String, info: coffer_stat) -> Bool {
        let key = Key(device: info.device, inode: info.inode)
        let stamp = Stamp(seconds: info.ctime_sec, nanoseconds: info.ctime_nsec)
        let shard = shard(key)
        if let (cached, excluded) = shard.state.withLock({ $0.exclusions[key] }), cached == stamp { return excluded }
        let excluded = BackupExclusion.isExcluded(in: folder, name: name)
        if Self.isSettled(stamp) {
            shard.state.withLock { state in
                if state.exclusions.count >= Self.capacity { state.exclusions.removeAll(keepingCapacity: true) }
                state.exclusions[key] = (stamp, excluded)
            }
        }
        return excluded
    }

    /// The `.hidden` list of `folder`.
    func hiddenList(of folder: Descriptor) -> HiddenList {
        var info = coffer_stat()
        guard coffer_fstat(folder.raw, &info) == 0 else { return HiddenList(folder: folder) }
        let key = Key(device: info.device, inode: info.inode)
        let changed = Stamp(seconds: info.ctime_sec, nanoseconds: info.ctime_nsec)
        let modified = Stamp(seconds: info.mtime_sec, nanoseconds: info.mtime_nsec)
        let shard = shard(key)
        if let cached = shard.state.withLock({ $0.hiddenLists[key] }), cached.folder == changed, cached.folderModified == modified {
            guard let file = cached.file else { return cached.list }
            if Self.stamp(ofHiddenFileIn: folder) == file { return cached.list }
        }
        // The file's stamp is taken before it is read: a change while it is read shows as a
        // different stamp next time.
        let file = Self.stamp(ofHiddenFileIn: folder)
        let list = HiddenList(folder: folder)
        if Self.isSettled(changed), Self.isSettled(modified), file.map(Self.isSettled) ?? true {
            shard.state.withLock { state in
                if state.hiddenLists.count >= Self.capacity { state.hiddenLists.removeAll(keepingCapacity: true) }
                state.hiddenLists[key] = HiddenEntry(folder: changed, folderModified: modified, file: file, list: list)
            }
        }
        return list
    }

    private static func stamp(ofHiddenFileIn folder: Descriptor) -> Stamp? {
        var info = coffer_stat()
        guard coffer_statx(folder.raw, HiddenList.fileName, &info) == 0 else { return nil }
        // The inode too: a `.hidden` replaced by another of the same size in the same instant.
        return Stamp(seconds: info.ctime_sec, nanoseconds: info.ctime_nsec, size: info.size ^ (info.inode << 32))
    }

    private static func isSettled(_ stamp: Stamp) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let age = (Int64(now.tv_sec) - stamp.seconds) * 1_000_000_000 + Int64(now.tv_nsec) - Int64(stamp.nanoseconds)
        return age > settledAfter * 1_000_000_000
    }
}
