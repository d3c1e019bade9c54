import CofferCore
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
    /// the machine has cores. Those already current cost a read of their first bytes each.
    /// Cancelling the task stops it between files; every thumbnail written is whole.
    public func prefetch(_ nodes: [FileNode], size: ThumbnailSize) async throws(CofferError) -> PrefetchSummary {
        var summary = PrefetchSummary()
        guard let store else {
            summary.skipped = nodes.count
            return summary
        }
        let candidates = nodes.filter(hasThumbnail)
        summary.skipped = nodes.count - candidates.count
        let named = try candidates.map { node throws(CofferError) in (node, try uri(of: node.path)) }
        // Which are current, in one pass off the pool: a read of each thumbnail's first bytes.
        let states = try await BlockingIO.run { _ throws(CofferError) -> [Bool?] in
            try named.map { node, uri throws(CofferError) -> Bool? in
                let stamp = SourceStamp(node)
                if try store.current(uri: uri, size: size, stamp: stamp) != nil { return true }
                if try store.failure(uri: uri, stamp: stamp) != nil { return nil }
                return false
            }
        }
        summary.current = states.count { $0 == true }
        summary.failed = states.count { $0 == nil }
        let stale = zip(candidates, states).compactMap { node, state in state == false ? node : nil }
        guard !stale.isEmpty else { return summary }

        final class Counter: Sendable {
            let next = Atomic<Int>(0)
        }
        let counter = Counter()
        let workers = min(stale.count, max(1, ProcessInfo.processInfo.activeProcessorCount))
        let outcomes = await withTaskGroup(of: PrefetchSummary.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    var done = PrefetchSummary()
                    while !Task.isCancelled {
                        let index = counter.next.add(1, ordering: .relaxed).oldValue
                        guard index < stale.count else { break }
                        do throws(CofferError) {
                            _ = try await thumbnail(stale[index].path, pixels: size.pixels)
                            done.made += 1
                        } catch where error.kind == .cancelled {
                            break
                        } catch where [.corruptFile, .tooLarge].contains(error.kind) {
                            done.failed += 1
                        } catch {
                            done.skipped += 1  // gone or unreadable meanwhile; a listing will show why
                        }
                    }
                    return done
                }
            }
            return await group.reduce(into: PrefetchSummary()) { total, part in
                total.made += part.made
                total.failed += part.failed
                total.skipped += part.skipped
            }
        }
        if Task.isCancelled { throw CofferError(.cancelled) }
        summary.made = outcomes.made
        summary.failed += outcomes.failed
        summary.skipped += outcomes.skipped
        return summary
    }
}
