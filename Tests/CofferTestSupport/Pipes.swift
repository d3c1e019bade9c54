import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Pipe {
    /// A pipe whose two descriptors are closed on exec. Foundation's `Pipe()` makes inheritable
    /// ones, and tests start processes from many threads at once: a `coffer rpc` started while
    /// another test's pipe was still open in this process kept that pipe's write end, so its
    /// reader never saw the end and the test hung. `Process` still gives the child its own copy
    /// (`dup2` clears the flag on the copy).
    public static func closedOnExec() -> Pipe {
        let pipe = Pipe()
        for fd in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        }
        return pipe
    }
}
