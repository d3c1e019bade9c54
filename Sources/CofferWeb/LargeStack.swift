import Dispatch
import Foundation

/// Runs CivetWeb's callbacks on a thread with a stack Swift can live with.
///
/// Debian's CivetWeb starts its workers with 100 KB stacks (built with `USE_STACK_SIZE`): enough
/// for C, not for Swift, whose runtime may recurse deeply the first time it meets a generic type
/// (a crash we met). Each callback runs on a thread of 4 MiB while CivetWeb's waits for it.
enum LargeStack {
    static let size = 4 << 20

    static func run<T>(_ body: () -> T) -> T {
        withoutActuallyEscaping(body) { body in
            let work = Unchecked(body)
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                work.result = work.body?()
                work.body = nil  // let go of it before the caller's block ends
                done.signal()
            }
            thread.stackSize = size
            thread.name = "coffer.web.request"
            thread.start()
            done.wait()
            return work.result!
        }
    }

    /// What crosses to the thread and back; only one thread touches it at a time.
    private final class Unchecked<T>: @unchecked Sendable {
        var body: (() -> T)?
        var result: T?
        init(_ body: @escaping () -> T) { self.body = body }
    }
}
