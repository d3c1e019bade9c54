import CofferCore
import FileService
import Synchronization

/// An open folder's entries as the kernel reads them, by index (the offsets it continues from):
/// read from the folder a batch at a time as the kernel gets to them, and let go once it has
/// passed them. A listing of 100,000 entries starts at once and holds a few hundred names (or,
/// from S3, a page of items) at a time; a kernel that goes back (`rewinddir`) has the folder
/// read again from its start.
final class FolderWindow: Sendable {
    private struct State {
        /// The index of `entries[0]`.
        var base = 0
        var entries: [OpenedFolder.Item] = []
        /// The folder has no entries after `entries`.
        var ended = false
        /// This pass's ``FolderWindow/unsent`` files: shown after the folder's own entries, and in
        /// place of any of theirs; `nil` until the pass reads its first batch.
        var unsent: [OpenedFolder.Item]?
    }

    private let folder: OpenedFolder
    /// Whether an entry is shown (one whose deletion is held back is not).
    private let shows: @Sendable (FolderEntry) -> Bool
    /// Reads the folder's next batch of at least the given size, waiting for it as every call of
    /// the mount waits (S3's pages: at most the operation's timeout).
    private let fetch: @Sendable (OpenedFolder, Int) throws(CofferError) -> [OpenedFolder.Item]
    /// Files of the folder made or changed through the mount and not yet in their storage (S3
    /// copies still open): the storage's listing does not have them yet, or has them as they were.
    private let unsent: @Sendable () -> [OpenedFolder.Item]
    private let state = Mutex(State())

    init(_ folder: OpenedFolder, shows: @escaping @Sendable (FolderEntry) -> Bool,
         fetch: @escaping @Sendable (OpenedFolder, Int) throws(CofferError) -> [OpenedFolder.Item],
         unsent: @escaping @Sendable () -> [OpenedFolder.Item] = { [] }) {
        self.folder = folder
        self.shows = shows
        self.fetch = fetch
        self.unsent = unsent
    }

    /// Up to `count` entries from index `start` on (fewer at the end of the folder);
    /// `restarting`: the kernel reads the folder from its start again (`rewinddir`).
    func entries(from start: Int, count: Int, restarting: Bool) throws(CofferError) -> [OpenedFolder.Item] {
        try state.withLock { state throws(CofferError) -> [OpenedFolder.Item] in
            if start < state.base || (restarting && (state.base > 0 || !state.entries.isEmpty || state.ended)) {
                folder.rewind()
                state = State()
            }
            while true {
                // What lies before `start` is passed: let it go.
                let passed = min(start - state.base, state.entries.count)
                if passed > 0 {
                    state.entries.removeFirst(passed)
                    state.base += passed
                }
                if state.ended || state.base + state.entries.count >= start + count { break }
                // Only an empty batch ends the folder: one cut short by a failure is followed by
                // a call that reports it.
                let added = state.unsent ?? unsent()
                state.unsent = added
                let replaced = Set(added.map(\.name))
                let more = try fetch(folder, max(256, count))
                state.entries.append(contentsOf: more.lazy.filter { self.shows($0.entry) && !replaced.contains($0.name) })
                if more.isEmpty {
                    state.ended = true
                    state.entries.append(contentsOf: added)
                }
            }
            let from = start - state.base
            guard from >= 0, from < state.entries.count else { return [] }
            return Array(state.entries[from..<min(state.entries.count, from + count)])
        }
    }

    func close() { folder.close() }
}
