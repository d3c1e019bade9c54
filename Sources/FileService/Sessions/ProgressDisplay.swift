public import CofferCore

/// Where a front end shows how far an operation has come: a progress bar on a terminal,
/// `$/progress` notifications to a JSON-RPC client.
///
/// An operation shows one attempt at a time: ``begin()`` when it starts work that reports
/// progress, ``end()`` when that attempt is over — before a conflict question is asked, say,
/// after which a new attempt begins afresh.
public protocol ProgressDisplay: Sendable {
    /// Starts showing an attempt; returns the reporter the work drives.
    func begin() -> ProgressReporter
    /// Stops showing it.
    func end()
}

/// When a progress display shows its next report: at most ten a second, and the last one
/// (the work complete) always — one rule for every front end's display (the REPL's bar,
/// RPC's `$/progress`, MCP's `notifications/progress`).
public struct ProgressPace: Sendable {
    /// The least time between two reports shown.
    public static let interval: Duration = .milliseconds(100)

    private var last: ContinuousClock.Instant?

    /// A pace that has shown nothing yet: its first report is shown.
    public init() {}

    /// Whether a report at `now` is shown; when it is, it is remembered as the last one.
    /// - Parameters:
    ///   - now: When the report is made.
    ///   - complete: The work is done: shown whatever the time.
    public mutating func admits(at now: ContinuousClock.Instant = .now, complete: Bool = false) -> Bool {
        if let last, now - last < Self.interval, !complete { return false }
        last = now
        return true
    }

    /// Forgets the last report (a new attempt starts).
    public mutating func reset() { last = nil }
}
