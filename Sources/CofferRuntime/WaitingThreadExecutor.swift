import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs a task's work on the thread that waits for it: for a front end whose own threads must
/// block until an operation's answer (a file system's calls), so that the operation costs no
/// hand-over from thread to thread. The task is started with this executor as its preference
/// (``Session/start(on:_:)``); the waiting thread then calls ``run(within:isDone:)``, which runs
/// the task's jobs as they come, and ``BlockingIO`` runs its calls right there instead of
/// handing them to its queue.
///
/// A wait has a deadline. Past it, or once the waiting thread has its answer, the executor is
/// *released*: whatever the task still has to do is handed to Dispatch's threads, so a task
/// that outlives its waiter still ends. The task's work should hold the executor (capture it),
/// so that it lives as long as the task may give it jobs.
public final class WaitingThreadExecutor: TaskExecutor, @unchecked Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var released = false
    }

    private let state = Mutex(State())
    private let arrived = DispatchSemaphore(value: 0)

    /// An executor for one wait: make one for each operation a thread waits for.
    public init() {}

    /// Takes a job of the task: kept for the waiting thread, or handed to Dispatch once released.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = state.withLock { state in
            if state.released { return false }
            state.jobs.append(job)
            return true
        }
        if queued {
            arrived.signal()
        } else {
            hand(job)
        }
    }

    /// Runs the jobs given to this executor on the calling thread until `isDone()` turns true
    /// (checked after each batch) or `seconds` have passed; then releases the executor. Returns
    /// whether `isDone()` was true.
    public func run(within seconds: Double, isDone: () -> Bool) -> Bool {
        let deadline = DispatchTime.now() + seconds
        let finished = WaitingThread.marked {
            while true {
                let jobs = state.withLock { state in
                    defer { state.jobs = [] }
                    return state.jobs
                }
                for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
                if isDone() { return true }
                if jobs.isEmpty, arrived.wait(timeout: deadline) == .timedOut { return isDone() }
            }
        }
        let left = state.withLock { state in
            state.released = true
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in left { hand(job) }
        return finished
    }

    private func hand(_ job: UnownedJob) {
        // (The executor lives until the job has run: it is the job's executor.)
        DispatchQueue.global(qos: .userInitiated).async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}

/// Whether the calling thread is running a ``WaitingThreadExecutor``'s jobs: a thread that may
/// block, where ``BlockingIO`` runs its calls in place.
enum WaitingThread {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static var isCurrent: Bool { pthread_getspecific(key) != nil }

    static func marked<T>(_ body: () -> T) -> T {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, outer) }
        return body()
    }
}
