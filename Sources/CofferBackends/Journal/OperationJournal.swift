import CofferCore
public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a process has under way in a container, kept so that the next start can clean up
/// after it if it is killed: the folders it has made partials in, and the trash entries it
/// is putting in or taking out.
///
/// Each process that changes something has one file, `AppData/Journal/<owner>.journal`
/// (``PartialName/owner``), made on its first change and held under an exclusive `flock`
/// until it exits. It is not removed at exit: the next start settles it like any other
/// journal whose process is gone, which after a clean end finds nothing to do but costs
/// one listing per folder named. The lock is how another process tells a live journal from a dead one:
/// the kernel drops it when its holder dies, `kill -9` included. A line is appended the
/// first time a folder gets a partial (one line per folder, not per file) and for every
/// trash entry touched, so the journal costs one small `write` now and then and start-up
/// reads only the journals of processes that are gone, never the tree.
///
/// Recording is best effort: a container whose `AppData` cannot be written still works,
/// without the clean-up.
public final class OperationJournal: Sendable {
    /// `AppData/Journal`.
    public let folderPath: String

    private struct State {
        var file: Int32 = -1
        var unavailable = false
        var noted: Set<Entry> = []
    }
    private let state = Mutex(State())

    public init(folderPath: String) { self.folderPath = folderPath }

    /// One line of a journal.
    struct Entry: Codable, Hashable {
        /// The host folder a mount (or an export's destination) starts at.
        var root: String
        /// Partials may be in the folder at these names below `root`.
        var folder: [String]?
        /// The trash at `root` has this entry in the making (put in or taken out).
        var trashEntry: String?
    }

    /// Notes that this process makes partials in the folder at `components` below `root`.
    public func notePartials(inFolder components: [String], below root: String) {
        record(Entry(root: root, folder: components))
    }

    /// Notes that this process puts the entry `id` into the trash at `root`, or takes it out.
    public func noteTrashEntry(_ id: String, inTrashAt root: String) {
        record(Entry(root: root, trashEntry: id))
    }

    private func record(_ entry: Entry) {
        state.withLock { state in
            guard !state.unavailable, !state.noted.contains(entry) else { return }
            if state.file < 0 {
                state.file = openOwnJournal()
                if state.file < 0 {
                    state.unavailable = true
                    return
                }
            }
            guard var line = try? JSONEncoder().encode(entry) else { return }
            line.append(UInt8(ascii: "\n"))
            let written = line.withUnsafeBytes { write(state.file, $0.baseAddress, $0.count) }
            if written == line.count { state.noted.insert(entry) }
        }
    }

    /// Opens this process's journal, creating and locking it under a name recovery takes
    /// for a dead process's, then giving it its real name: a journal is never seen unlocked
    /// while its owner lives. A second journal object of this process for the same folder
    /// shares the file (the first one holds the lock).
    private func openOwnJournal() -> Int32 {
        let owner = PartialName.owner
        let existing = open(journalPath(owner: owner), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
        if existing >= 0 {
            _ = flock(existing, LOCK_EX | LOCK_NB)
            return existing
        }
        let making = folderPath + "/." + owner + Self.suffix
        mkdir(folderPath, 0o700)
        let fd = open(making, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return -1 }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, rename(making, journalPath(owner: owner)) == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    private func journalPath(owner: String) -> String { folderPath + "/" + owner + Self.suffix }

    static let suffix = ".journal"
}

// MARK: Recovery

extension OperationJournal {
    /// What a start-up recovery did.
    public struct Recovery: Sendable, Equatable {
        /// Journals of processes that are gone, read and settled.
        public var journals = 0
        /// Partials removed.
        public var partials = 0
        /// Trash information files without their item removed (a put in that did not get
        /// as far as moving the item, or a restore that did not get as far as the clean-up).
        public var trashEntries = 0

        public init() {}
    }

    /// Settles the journals in `folderPath` whose process is gone: removes the partials
    /// they made and the trash information files they left without an item, then the
    /// journal. A journal whose clean-up fails (a read-only mount) is kept for next time.
    /// Journals of running processes are left alone.
    public static func recover(folderPath: String) -> Recovery {
        var recovery = Recovery()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folderPath) else { return recovery }
        for name in names where name.hasSuffix(suffix) {
            let owner = name.hasPrefix(".") ? String(name.dropFirst().dropLast(suffix.count))
                                            : String(name.dropLast(suffix.count))
            let path = folderPath + "/" + name
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Held by a live process: its partials are in use.
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            var settled = true
            var seen: Set<Entry> = []
            for line in readLines(fd) {
                guard let entry = try? JSONDecoder().decode(Entry.self, from: Data(line.utf8)),
                      seen.insert(entry).inserted else { continue }
                if let folder = entry.folder {
                    guard let removed = removePartials(of: owner, in: folder, below: entry.root) else {
                        settled = false
                        continue
                    }
                    recovery.partials += removed
                } else if let id = entry.trashEntry {
                    guard let removed = settleTrashEntry(id, inTrashAt: entry.root) else {
                        settled = false
                        continue
                    }
                    recovery.trashEntries += removed ? 1 : 0
                }
            }
            if settled {
                unlink(path)
                recovery.journals += 1
            }
        }
        return recovery
    }

    /// Removes the partials directly in the folder at `path` whose process is gone, whatever
    /// its journal said: one whose journal is there and no longer locked, or, with no journal
    /// at all, one older than `minimumAge` (a process that could not keep a journal is the
    /// only maker of those, and a live one finishes a trash entry's partial within moments).
    /// For the folders where partials must never outlast their process — the trash's
    /// `info/` and `files/` — as a second net under ``recover(folderPath:)``.
    @discardableResult
    public static func removeOrphanPartials(inFolderAt path: String, journalFolder: String,
                                            minimumAge: TimeInterval = 60, now: Date = Date()) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path),
              names.contains(where: { PartialName.ownerOf($0) != nil }), let folder = openFolder([], below: path) else { return 0 }
        var removed = 0
        var living: [Substring: Bool] = [:]
        for name in names {
            guard let owner = PartialName.ownerOf(name) else { continue }
            let alive = living[owner] ?? {
                let fd = open(journalFolder + "/" + owner + suffix, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                guard fd >= 0 else { return nil }
                defer { close(fd) }
                return flock(fd, LOCK_EX | LOCK_NB) != 0
            }()
            living[owner] = alive
            if alive == true { continue }
            if alive == nil {
                var info = stat()
                guard lstat(path + "/" + name, &info) == 0,
                      now.timeIntervalSince1970 - Double(info.st_mtim.tv_sec) >= minimumAge else { continue }
            }
            guard (try? RemoveTree.remove(name, in: folder, path: .root())) != nil else { continue }
            removed += 1
        }
        return removed
    }

    private static func readLines(_ fd: Int32) -> [Substring] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 64 << 20 {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        // A line cut short by the crash is not JSON and is skipped.
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    }

    /// Opens the folder at `components` below the host folder `root`, following no link on
    /// the way (each step `O_NOFOLLOW`, and `..` is never a component of a name).
    private static func openFolder(_ components: [String], below root: String) -> Descriptor? {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var folder = Descriptor(fd)
        for name in components {
            guard FileName.problem(with: name) == nil || PartialName.isPartial(name),
                  let next = try? folder.openFolder(named: name, reporting: nil) else { return nil }
            folder = next
        }
        return folder
    }

    /// Removes the partials `owner` made directly in a folder. `nil`: they could not be
    /// removed (a folder gone or renamed counts as done: nothing can be found there).
    private static func removePartials(of owner: String, in components: [String], below root: String) -> Int? {
        guard let folder = openFolder(components, below: root) else {
            return errno == ENOENT || errno == ENOTDIR ? 0 : nil
        }
        guard let names = try? folder.entryNames(reporting: nil) else { return nil }
        var removed = 0
        for name in names where PartialName.ownerOf(name).map({ $0 == owner }) == true {
            guard (try? RemoveTree.remove(name, in: folder, path: .root())) != nil else { return nil }
            removed += 1
        }
        return removed
    }

    /// Removes the information file of `id` when its item is not in the trash. `nil`: it
    /// could not be checked or removed.
    private static func settleTrashEntry(_ id: String, inTrashAt root: String) -> Bool? {
        guard FileName.problem(with: id) == nil else { return false }
        guard let files = openFolder(["files"], below: root), let info = openFolder(["info"], below: root) else {
            return errno == ENOENT ? false : nil
        }
        var item = stat()
        if fstatat(files.raw, id, &item, AT_SYMLINK_NOFOLLOW) == 0 { return false }
        guard errno == ENOENT else { return nil }
        if unlinkat(info.raw, id + TrashInfo.suffix, 0) == 0 { return true }
        return errno == ENOENT ? false : nil
    }
}
