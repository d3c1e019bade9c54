import Foundation

/// Work split over the cores, for batches of independent system calls (stats of a listing,
/// reads of a folder's thumbnails).
public enum Parallel {
    /// How many slices to split `count` items into: one below `threshold`, else one per
    /// core (at most `most`).
    public static func slices(for count: Int, threshold: Int, most: Int = .max) -> Int {
        count >= threshold ? max(1, min(most, cores)) : 1
    }

    /// Asked once: Foundation reads it from the system each time.
    private static let cores = ProcessInfo.processInfo.activeProcessorCount

    /// `body` of each of `slices` consecutive slices of `items`, run concurrently; the
    /// outputs in slice order.
    public static func perSlice<Element: Sendable, Output>(_ items: [Element], slices: Int,
                                                    _ body: @Sendable (ArraySlice<Element>) -> Output) -> [Output] {
        let slices = max(1, min(slices, items.count))
        if slices == 1 { return [body(items[...])] }
        let outputs = Outputs<Output>(count: slices)
        DispatchQueue.concurrentPerform(iterations: slices) { slice in
            let range = (items.count * slice / slices)..<(items.count * (slice + 1) / slices)
            outputs.store(slice, body(items[range]))
        }
        return outputs.values
    }

    /// One output per slice, filled in by concurrent workers.
    private final class Outputs<Output>: @unchecked Sendable {
        private var slots: [Output?]
        private let lock = NSLock()

        init(count: Int) { slots = Array(repeating: nil, count: count) }

        func store(_ slice: Int, _ output: Output) { lock.withLock { slots[slice] = output } }

        var values: [Output] { lock.withLock { slots.map { $0! } } }
    }
}
