import Dispatch
import Foundation

/// A thread of its own that lives as long as the process and runs one body at a time for
/// whoever calls ``run(_:)``, which waits for it.
///
/// For work that must not run on the caller's thread: with a stack the caller's thread lacks
/// (CivetWeb's workers have 100 KB), or from a thread that never ends (a child's
/// `PR_SET_PDEATHSIG` fires when the thread that started it ends). One caller at a time: the
/// others wait their turn.
public final class DedicatedThread: @unchecked Sendable {
    private let turn = DispatchSemaphore(value: 1)
    private let start = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Set by the caller before `start`, cleared by the thread before `finished`.
    private var body: (() -> Void)?

    public init(name: String, stackSize: Int = 1 << 20) {
        let thread = Thread { [self] in
            while true {
                start.wait()
                body?()
                body = nil  // let go of the caller's closure before it is told it is done
                finished.signal()
            }
        }
        thread.stackSize = stackSize
        thread.name = name
        thread.start()
    }

    /// Runs `body` on the thread and returns what it returns.
    public func run<T>(_ body: () -> T) -> T {
        withoutActuallyEscaping(body) { body in
            turn.wait()
            defer { turn.signal() }
            var result: T?
            self.body = { result = body() }
            start.signal()
            finished.wait()
            return result!
        }
    }
}
