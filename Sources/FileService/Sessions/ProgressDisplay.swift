import CofferCore

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
