import CofferCore
import FileService
import Synchronization

/// An open folder's entries as the kernel reads them, by index (the offsets it continues from):
/// read from the folder a batch at a time as the kernel gets to them, and let go once it has
/// passed them. A listing of 100,000 entries starts at once and holds a few hundred names at a
/// time; a kernel that goes back (`rewinddir`) has the folder read again from its start.
final class FolderWindow: Sendable {
    private struct State {
        /// The index of `entries[0]`.
        var base = 0
        var entries: [FolderEntry] = []
        /// The folder has no entries after `entries`.
        var ended = false
    }

    private let folder: OpenedFolder
    /// Whether an entry is shown (one whose deletion is held back is not).
    private let shows: @Sendable (FolderEntry) -> Bool
    private let state = Mutex(State())

    init(_ folder: OpenedFolder, shows: @escaping @Sendable (FolderEntry) -> Bool) {
        self.folder = folder
        self.shows = shows
    }

    /// Up to `count` entries from index `start` on (fewer at the end of the folder);
    /// `restarting`: the kernel reads the folder from its start again (`rewinddir`).
    func entries(from start: Int, count: Int, restarting: Bool) throws(CofferError) -> [FolderEntry] {
        try state.withLock { state throws(CofferError) -> [FolderEntry] in
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
                let more = try folder.next(max(256, count))
                if more.isEmpty { state.ended = true }
                state.entries.append(contentsOf: more.lazy.filter(shows))
            }
            let from = start - state.base
            guard from >= 0, from < state.entries.count else { return [] }
            return Array(state.entries[from..<min(state.entries.count, from + count)])
        }
    }

    func close() { folder.close() }
}
