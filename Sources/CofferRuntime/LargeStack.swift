import Synchronization

/// Runs CivetWeb's callbacks (the web page's, MCP over HTTP's) on a thread with a stack Swift
/// can live with.
///
/// Debian's CivetWeb starts its workers with 100 KB stacks (built with `USE_STACK_SIZE`): enough
/// for C, not for Swift, whose runtime may recurse deeply the first time it meets a generic type
/// (a crash we met). Each callback runs on a ``DedicatedThread`` of 4 MiB while CivetWeb's waits
/// for it. The threads are kept and reused (one per callback running at once, at most one per
/// CivetWeb worker), so a WebSocket message costs a hand-over, not a new thread.
public enum LargeStack {
    public static let size = 4 << 20

    private static let idle = Mutex<[DedicatedThread]>([])

    public static func run<T>(_ body: () -> T) -> T {
        let thread = idle.withLock { $0.popLast() } ?? DedicatedThread(name: "coffer.web.request", stackSize: size)
        defer { idle.withLock { $0.append(thread) } }
        return thread.run(body)
    }
}
