import Synchronization

/// How far a long operation has come.
public struct OperationProgress: Sendable, Hashable {
    /// Bytes done so far.
    public var completedBytes: Int64
    /// Bytes expected in all; 0 while unknown.
    public var totalBytes: Int64
    /// Items done so far.
    public var completedItems: Int
    /// Items expected in all; 0 while unknown.
    public var totalItems: Int

    /// Progress with these counts.
    public init(completedBytes: Int64 = 0, totalBytes: Int64 = 0, completedItems: Int = 0, totalItems: Int = 0) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.completedItems = completedItems
        self.totalItems = totalItems
    }

    /// What progress is counted in.
    public enum Measure: Sendable, Hashable {
        /// Bytes: a few large items.
        case bytes
        /// Items: many small ones, or bytes not known.
        case items
    }

    /// Items of fewer bytes than this, on average, are counted one by one: their time goes by
    /// the item, not by the byte.
    public static let smallItem: Int64 = 1 << 20

    /// What this progress is counted in, decided here once for every front end (the REPL's
    /// bar, `$/progress`, MCP's `notifications/progress`, the web page): bytes — a download, a
    /// big file moved across mounts — unless there are many items of few bytes each (a folder
    /// of small files), or the bytes are not known.
    public var measure: Measure {
        guard totalItems > 1 else { return .bytes }
        return totalBytes == 0 || totalBytes / Int64(totalItems) < Self.smallItem ? .items : .bytes
    }

    /// The work done and to do, in ``measure``.
    public var measured: (done: Int64, total: Int64) {
        switch measure {
        case .bytes: (completedBytes, totalBytes)
        case .items: (Int64(completedItems), Int64(totalItems))
        }
    }

    /// 0…1 in ``measure``, or `nil` while the total is unknown.
    public var fraction: Double? {
        let (done, total) = measured
        return total > 0 ? min(1, Double(max(0, done)) / Double(total)) : nil
    }
}

/// Collects progress from any thread and hands it to the caller's sink.
///
/// Thread-safe; cheap to call from tight copy loops. The sink is called synchronously,
/// so it should only record or print.
public final class ProgressReporter: Sendable {
    private let state: Mutex<OperationProgress>
    private let sink: (@Sendable (OperationProgress) -> Void)?

    /// A reporter that calls `sink` on every update (or drops updates when `nil`).
    public init(sink: (@Sendable (OperationProgress) -> Void)? = nil) {
        self.state = Mutex(OperationProgress())
        self.sink = sink
    }

    /// A reporter that discards updates.
    public static var none: ProgressReporter { ProgressReporter() }

    /// The progress reported so far.
    public var current: OperationProgress { state.withLock { $0 } }

    /// Adds to the expected totals.
    public func expect(bytes: Int64, items: Int) {
        let snapshot = state.withLock { progress in
            progress.totalBytes += bytes
            progress.totalItems += items
            return progress
        }
        sink?(snapshot)
    }

    /// Records finished work.
    public func advance(bytes: Int64 = 0, items: Int = 0) {
        let snapshot = state.withLock { progress in
            progress.completedBytes += bytes
            progress.completedItems += items
            return progress
        }
        sink?(snapshot)
    }
}
