public import CofferCore
import CofferRuntime
import Foundation
import Synchronization

/// What a folder's thumbnailing did.
public struct PrefetchSummary: Sendable, Hashable, Encodable {
    /// Thumbnails made now.
    public var made = 0
    /// Thumbnails already current in the cache.
    public var current = 0
    /// Files no thumbnail could be made of (now or before, unchanged since).
    public var failed = 0
    /// Items without thumbnails (not images or PDFs), and files gone meanwhile.
    public var skipped = 0

    public init() {}
}

extension Previewer {
    /// Makes the missing and out-of-date thumbnails of `nodes` at `size`, as many at once as
    /// the machine has cores. Files unchanged since the folder's last run are known from its
    /// manifest at once; any other costs a read of its thumbnail's first bytes. Cancelling the
    /// task stops it between files; every thumbnail written is whole.
    public func prefetch(_ nodes: [FileNode], size: ThumbnailSize) async throws(CofferError) -> PrefetchSummary {
        var summary = PrefetchSummary()
        guard let store else {
            summary.skipped = nodes.count
            return summary
        }
        let candidates = nodes.filter(hasThumbnail)
        summary.skipped = nodes.count - candidates.count
        // Items of one folder (a listing's) share a manifest; others are checked one by one.
        let folder = candidates.first?.path.parent
        let oneFolder = folder != nil && candidates.allSatisfy { $0.path.parent == folder }
        let known = oneFolder ? FolderManifest.read(folder!, size: size, in: store).entries : [:]
        var states: [Bool?] = candidates.map { node in
            guard let entry = known[node.name], entry.describes(node) else { return false }
            return entry.failed ? nil : true
        }
        let unknown = states.indices.filter { states[$0] == false }
        if !unknown.isEmpty {
            // Off the pool and on every core: a read of each thumbnail's first bytes.
            let naming = try uriNaming()
            let checked = try await BlockingIO.run { _ throws(CofferError) -> [Bool?] in
                let checker = ThumbnailStore.Checker(store, size: size)
                let slices = Parallel.perSlice(unknown.map { candidates[$0] },
                                               slices: Parallel.slices(for: unknown.count, threshold: 32)) { slice in
                    slice.map { node in
                        Result { () throws(CofferError) -> Bool? in
                            try checker.state(uri: try naming(node.path), stamp: SourceStamp(node))
                        }
                    }
                }
                return try slices.joined().map { (state) throws(CofferError) in try state.get() }
            }
            for (index, state) in zip(unknown, checked) { states[index] = state }
        }
        summary.current = states.count { $0 == true }
        summary.failed = states.count { $0 == nil }
        let stale = zip(candidates, states).compactMap { node, state in state == false ? node : nil }
        let made = try await make(stale, size: size)
        summary.made = made.summary.made
        summary.failed += made.summary.failed
        summary.skipped += made.summary.skipped
        // Every file as the manifest has it, and none gone: nothing to write.
        let unchanged = unknown.isEmpty && known.count == candidates.count
        if oneFolder, !unchanged, let folder {
            var entries: [String: FolderManifest.Entry] = [:]
            for (node, state) in zip(candidates, states) where state != false {
                entries[node.name] = FolderManifest.Entry(node, failed: state == nil)
            }
            for (name, failed) in made.outcomes { entries[name] = FolderManifest.Entry(made.nodes[name]!, failed: failed) }
            if entries != known {
                let manifest = FolderManifest(folder: folder, entries: entries)
                try? await BlockingIO.run { _ throws(CofferError) in try manifest.write(size: size, in: store) }
            }
        }
        if Task.isCancelled { throw CofferError(.cancelled) }
        return summary
    }

    /// Makes the thumbnails of `stale`, on every core: the counts, and for each file whose
    /// thumbnail was made (`false`) or failed (`true`) its outcome by name.
    private func make(_ stale: [FileNode], size: ThumbnailSize) async throws(CofferError)
        -> (summary: PrefetchSummary, outcomes: [String: Bool], nodes: [String: FileNode]) {
        guard !stale.isEmpty else { return (PrefetchSummary(), [:], [:]) }
        final class Counter: Sendable {
            let next = Atomic<Int>(0)
        }
        struct Done: Sendable {
            var summary = PrefetchSummary()
            var outcomes: [String: Bool] = [:]
        }
        let counter = Counter()
        let workers = min(stale.count, max(1, ProcessInfo.processInfo.activeProcessorCount))
        let done = await withTaskGroup(of: Done.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    var done = Done()
                    while !Task.isCancelled {
                        let index = counter.next.add(1, ordering: .relaxed).oldValue
                        guard index < stale.count else { break }
                        let node = stale[index]
                        do throws(CofferError) {
                            _ = try await thumbnail(node.path, pixels: size.pixels)
                            done.summary.made += 1
                            done.outcomes[node.name] = false
                        } catch where error.kind == .cancelled {
                            break
                        } catch where [.corruptFile, .tooLarge].contains(error.kind) {
                            done.summary.failed += 1
                            done.outcomes[node.name] = true
                        } catch {
                            done.summary.skipped += 1  // gone or unreadable meanwhile; a listing will show why
                        }
                    }
                    return done
                }
            }
            return await group.reduce(into: Done()) { total, part in
                total.summary.made += part.summary.made
                total.summary.failed += part.summary.failed
                total.summary.skipped += part.summary.skipped
                total.outcomes.merge(part.outcomes) { first, _ in first }
            }
        }
        let nodes = Dictionary(stale.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return (done.summary, done.outcomes, nodes)
    }
}
