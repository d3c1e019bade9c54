import Synchronization

/// How far a long operation has come.
public struct OperationProgress: Sendable, Hashable {
    public var completedBytes: Int64
    public var totalBytes: Int64
    public var completedItems: Int
    public var totalItems: Int

    public init(completedBytes: Int64 = 0, totalBytes: Int64 = 0, completedItems: Int = 0, totalItems: Int = 0) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.completedItems = completedItems
        self.totalItems = totalItems
    }

    /// 0…1, or `nil` while the total is unknown.
    public var fraction: Double? {
        totalBytes > 0 ? min(1, Double(completedBytes) / Double(totalBytes)) : nil
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
