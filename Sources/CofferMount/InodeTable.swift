import CCofferFUSE
import CofferCore
import Foundation
import Synchronization

/// The inode numbers the kernel knows, and the item each stands for.
///
/// The kernel names items by number; Coffer names them by path. A number is given the first time
/// the kernel looks a path up, counted for each lookup, and dropped when the kernel forgets it as
/// often as it was looked up. Numbers are never reused within a mount, so no generation is needed.
/// A rename carries the numbers of the item and everything under it to the new paths; a deleted
/// item's number is detached from its path (a new item of that name gets a new number) and lives
/// until the kernel forgets it.
final class InodeTable: Sendable {
    /// What a number stands for.
    enum Item: Hashable, Sendable {
        /// The root of `coffer mount --all`: a folder of the visible mounts.
        case mounts
        /// An item of a mount (a mount's root too).
        case path(VirtualPath)
    }

    private struct Entry {
        var item: Item
        var lookups: UInt64
        /// Still the item at its path (not deleted, not replaced).
        var attached: Bool
        /// What the file held when the kernel last cached it, if that is known.
        var content: ContentStamp?
        /// How many opens found that unknown or changed: only the latest of them records.
        var drops: UInt64 = 0
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var numbers: [Item: UInt64] = [:]
        var next: UInt64 = 2
    }

    private let state: Mutex<State>

    /// A table whose root (number 1) is `root`.
    init(root: Item) {
        var state = State()
        state.entries[1] = Entry(item: root, lookups: 1, attached: true)
        state.numbers[root] = 1
        self.state = Mutex(state)
    }

    /// What `number` stands for; `nil` for a number the table does not know.
    func item(_ number: UInt64) -> Item? { state.withLock { $0.entries[number]?.item } }

    /// The path `number` stands for; `nil` for the root of `--all`, an unknown number, or one
    /// whose item was deleted or replaced since (its path names another item now, or none).
    func path(_ number: UInt64) -> VirtualPath? {
        state.withLock { state in
            guard let entry = state.entries[number], entry.attached, case .path(let path) = entry.item else { return nil }
            return path
        }
    }

    /// Whether `number` still stands for the item at its path (not deleted or replaced since).
    func isAttached(_ number: UInt64) -> Bool { state.withLock { $0.entries[number]?.attached ?? false } }

    /// The number the kernel knows `item` by, without counting a lookup; `nil` when it knows none.
    func existingNumber(_ item: Item) -> UInt64? { state.withLock { $0.numbers[item] } }

    /// The number of `item`, counting one lookup (as a `lookup` or `readdirplus` answer does).
    func lookUp(_ item: Item) -> UInt64 {
        state.withLock { state in
            if let number = state.numbers[item] {
                state.entries[number]!.lookups += 1
                return number
            }
            let number = state.next
            state.next += 1
            state.entries[number] = Entry(item: item, lookups: 1, attached: true)
            state.numbers[item] = number
            return number
        }
    }

    /// A number to show for `item` in a plain listing, without a lookup: its own when it has
    /// one, else one that stands for nothing (the kernel looks the name up before using it).
    func shownNumber(_ item: Item) -> UInt64 {
        state.withLock { state in state.numbers[item] ?? (UInt64(truncatingIfNeeded: item.hashValue) | (1 << 63)) }
    }

    /// The kernel dropped `count` lookups of `number`.
    func forget(_ number: UInt64, _ count: UInt64) {
        guard number != 1 else { return }
        state.withLock { state in
            guard var entry = state.entries[number] else { return }
            entry.lookups = entry.lookups > count ? entry.lookups - count : 0
            if entry.lookups > 0 {
                state.entries[number] = entry
                return
            }
            state.entries[number] = nil
            if entry.attached, state.numbers[entry.item] == number { state.numbers[entry.item] = nil }
        }
    }

    /// The item at `path` is gone (deleted, or replaced by another): its number no longer
    /// stands for the path, nor, for a folder (`withContents`), do the numbers of what was
    /// inside it.
    func detach(_ path: VirtualPath, withContents: Bool) {
        state.withLock { state in Self.detach(path, withContents: withContents, in: &state) }
    }

    /// The item at `source`, and for a folder (`withContents`) all inside it, is now at
    /// `destination`; what was at `destination` before is detached.
    func move(_ source: VirtualPath, to destination: VirtualPath, withContents: Bool) {
        state.withLock { state in
            Self.detach(destination, withContents: true, in: &state)
            for (item, number) in Self.held(source, withContents: withContents, in: state) {
                guard case .path(let held) = item else { continue }
                let moved = Item.path(VirtualPath(mount: destination.mount,
                                                  trustedComponents: destination.components + held.components.dropFirst(source.components.count)))
                state.numbers[item] = nil
                state.numbers[moved] = number
                state.entries[number]?.item = moved
            }
        }
    }

    private static func detach(_ path: VirtualPath, withContents: Bool, in state: inout State) {
        for (item, number) in held(path, withContents: withContents, in: state) {
            state.numbers[item] = nil
            state.entries[number]?.attached = false
        }
    }

    /// The numbered items at `path` and, `withContents`, inside it (a scan of the table: only
    /// for folders, whose contents the kernel may hold numbers of).
    private static func held(_ path: VirtualPath, withContents: Bool, in state: State) -> [(Item, UInt64)] {
        guard withContents else { return state.numbers[.path(path)].map { [(.path(path), $0)] } ?? [] }
        return state.numbers.filter { item, _ in
            if case .path(let held) = item { return path.contains(held) }
            return false
        }.map { ($0.key, $0.value) }
    }

    /// How many numbers the kernel holds (for tests and `--verbose`).
    var count: Int { state.withLock { $0.entries.count } }

    // MARK: What the kernel caches

    /// `number` is being opened, its content as `content` shows it now (`nil`: unknown): whether
    /// the pages the kernel kept from before may stay (`keep`), because the file shows what it
    /// showed when they were cached. When they may not, nothing is recorded until the kernel has
    /// taken the answer that drops them (``dropped(_:ticket:content:)`` with `ticket`), and only
    /// for the latest such open: an open the kernel never took drops nothing, and opens meanwhile
    /// drop the pages too.
    func opened(_ number: UInt64, content: ContentStamp?) -> (keep: Bool, ticket: UInt64) {
        state.withLock { state in
            guard var entry = state.entries[number] else { return (false, 0) }
            if content != nil && entry.content == content { return (true, 0) }
            entry.content = nil
            entry.drops += 1
            state.entries[number] = entry
            return (false, entry.drops)
        }
    }

    /// The kernel took the open `ticket` names, which dropped `number`'s pages: from now on they
    /// stand for `content`, unless another open or a write came since.
    func dropped(_ number: UInt64, ticket: UInt64, content: ContentStamp?) {
        state.withLock { state in
            guard var entry = state.entries[number], entry.content == nil, entry.drops == ticket else { return }
            entry.content = content
            state.entries[number] = entry
        }
    }

    /// The mount's own writes left `number` as `content` shows it (`nil`: unknown, so the next
    /// open drops what the kernel cached).
    func wrote(_ number: UInt64, content: ContentStamp?) {
        state.withLock { state in
            guard var entry = state.entries[number] else { return }
            entry.content = content
            entry.drops += 1
            state.entries[number] = entry
        }
    }
}

/// What a file held, as far as its facts tell: while they stay the same, the pages the kernel
/// cached of it are right. For a file on disk its inode, size and times (a change time moves
/// with every write, whatever a program sets the modification time to); for a file of other
/// storage its size, time and version (an ETag).
struct ContentStamp: Hashable, Sendable {
    /// The file's inode on disk (its device too), or its version in other storage.
    let identity: Int
    private let size: Int64
    private let modified: Int64
    private let changed: Int64

    /// The stamp of the open file `descriptor`; `nil` when it cannot be read.
    init?(descriptor: Int32) {
        var facts = stat()
        guard fstat(descriptor, &facts) == 0 else { return nil }
        var hasher = Hasher()
        hasher.combine(facts.st_dev)
        hasher.combine(facts.st_ino)
        identity = hasher.finalize()
        size = Int64(facts.st_size)
        modified = Int64(facts.st_mtim.tv_sec) * 1_000_000_000 + Int64(facts.st_mtim.tv_nsec)
        changed = Int64(facts.st_ctim.tv_sec) * 1_000_000_000 + Int64(facts.st_ctim.tv_nsec)
    }

    /// The stamp of a file of storage without descriptors, from its facts.
    init(node: FileNode) {
        identity = node.version?.hashValue ?? 0
        size = node.size
        modified = Int64((node.modificationDate.timeIntervalSince1970 * 1e9).rounded())
        changed = 0
    }
}
