import Dispatch
import Foundation
import Synchronization

/// Runs CivetWeb's callbacks on a thread with a stack Swift can live with.
///
/// Debian's CivetWeb starts its workers with 100 KB stacks (built with `USE_STACK_SIZE`): enough
/// for C, not for Swift, whose runtime may recurse deeply the first time it meets a generic type
/// (a crash we met). Each callback runs on a thread of 4 MiB while CivetWeb's waits for it. The
/// threads are kept and reused (one per callback running at once, at most one per CivetWeb
/// worker), so a WebSocket message costs a hand-over, not a new thread.
enum LargeStack {
    static let size = 4 << 20

    /// A thread of 4 MiB that runs one body at a time.
    private final class Runner: @unchecked Sendable {
        let start = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        /// Set by the caller before `start`, cleared by the runner before `finished`.
        var body: (() -> Void)?

        init() {
            let thread = Thread { [self] in
                while true {
                    start.wait()
                    body?()
                    body = nil  // let go of the caller's closure before it is told it is done
                    finished.signal()
                }
            }
            thread.stackSize = LargeStack.size
            thread.name = "coffer.web.request"
            thread.start()
        }
    }

    private static let idle = Mutex<[Runner]>([])

    static func run<T>(_ body: () -> T) -> T {
        withoutActuallyEscaping(body) { body in
            let runner = idle.withLock { $0.popLast() } ?? Runner()
            var result: T?
            runner.body = { result = body() }
            runner.start.signal()
            runner.finished.wait()
            idle.withLock { $0.append(runner) }
            return result!
        }
    }
}
