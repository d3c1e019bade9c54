public import CofferCore
import Dispatch
import Synchronization

/// Runs blocking system calls on Dispatch threads, never on Swift's cooperative pool (in place
/// on a thread that waits for the task anyway: ``WaitingThreadExecutor``).
/// Public so the service can keep its own host-side calls (opening host paths, sniffing,
/// the bookmark file) off the pool too.
public enum BlockingIO {
    private static let queue = DispatchQueue(label: "coffer.blocking-io", qos: .userInitiated,
                                             attributes: .concurrent)

    /// Runs `body` off the cooperative pool. If the calling task is cancelled, the flag
    /// handed to `body` turns true; long loops check it and clean up. What `body` reports
    /// (``OperationWarnings``) goes to the calling task's operation.
    public static func run<T: Sendable>(_ body: @escaping @Sendable (CancellationFlag) throws(CofferError) -> T)
        async throws(CofferError) -> T
    {
        try await run(waitingOnNetwork: false, body)
    }

    /// Runs `body` as ``run(_:)`` does. `waitingOnNetwork`: `body` waits for another machine (a
    /// store's requests), so it is never run in place on a waiting thread, whose deadline must
    /// hold however long the other machine takes.
    public static func run<T: Sendable>(waitingOnNetwork: Bool,
                                        _ body: @escaping @Sendable (CancellationFlag) throws(CofferError) -> T)
        async throws(CofferError) -> T
    {
        let flag = CancellationFlag()
        if !waitingOnNetwork, WaitingThread.isCurrent {
            // A thread that waits for this task anyway: the call runs here, with no hand-over.
            let outcome = await withTaskCancellationHandler {
                Result { () throws(CofferError) -> T in try body(flag) }
            } onCancel: {
                flag.cancel()
            }
            return try outcome.get()
        }
        // What the work warns of goes to the operation that started it (task-locals stay with tasks).
        let warnings = OperationWarnings.current
        let result: Result<T, CofferError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.async {
                    let run = { Result { () throws(CofferError) -> T in try body(flag) } }
                    // Bound only when an operation listens: most blocking calls have no one to tell.
                    let outcome = warnings.map { OperationWarnings.$current.withValue($0, operation: run) } ?? run()
                    continuation.resume(returning: outcome)
                }
            }
        } onCancel: {
            flag.cancel()
        }
        return try result.get()
    }
}

/// Set when the task that started a blocking operation is cancelled.
public final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)

    public init() {}

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Throws ``CofferError/Kind/cancelled`` once cancelled.
    public func check(_ path: VirtualPath?) throws(CofferError) {
        if isCancelled { throw CofferError(.cancelled, path: path) }
    }
}
