import CCofferSystem
import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The child side of ``Decoder``: a program started with ``argument`` confines itself, then
/// takes jobs from its standard input (a socket: each job's length, its JSON and the file's
/// descriptor), decodes, and writes each answer back (its length and its JSON), until the
/// socket closes.
///
/// `CofferApplication` runs it before anything else when its first argument is ``argument``,
/// so every program built on it (`coffer`, an application's own) can decode for itself.
public enum DecoderWorker {
    /// The first argument that makes a program a decoder.
    public static let argument = "--coffer-decoder"

    /// Runs jobs as `arguments` (`[program, argument, PARENT-PID, CPU-SECONDS, MEMORY-BYTES]`)
    /// say; returns the exit status (0 when the parent closed the socket).
    public static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 5, arguments[1] == argument, let parent = pid_t(arguments[2]),
              let cpu = Int(arguments[3]), let memory = Int(arguments[4]) else { return 2 }
        // Dies with its parent, gains no privileges, bounded in memory before the first byte is read.
        guard coffer_confine_child() == 0, getppid() == parent else { return 3 }
        var space = rlimit(rlim_cur: rlim_t(memory), rlim_max: rlim_t(memory))
        var core = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &space) == 0,
              setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &core) == 0 else { return 3 }
        let path = (try? VirtualPath(parsing: "files:/")) ?? .root()
        while let (job, fd) = nextJob() {
            // The kernel's own stop for this job's processor time, a little past the parent's.
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            var processor = rlimit()
            _ = getrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &processor)
            processor.rlim_cur = min(processor.rlim_max, rlim_t(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + cpu + 5))
            _ = setrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &processor)
            let answer = job.perform(on: fd, cancellation: CancellationFlag(), path: path)
            close(fd)
            guard let data = try? JSONEncoder().encode(answer) else { return 4 }
            var length = UInt64(data.count).bigEndian
            guard sendAll(withUnsafeBytes(of: &length) { [UInt8]($0) }, on: 0), sendAll([UInt8](data), on: 0) else { return 5 }
        }
        return 0
    }

    /// The next job and its file, or `nil` once the parent has closed the socket.
    private static func nextJob() -> (DecodeJob, Int32)? {
        var header = [UInt8](repeating: 0, count: 4)
        var fd: Int32 = -1
        let count = header.withUnsafeMutableBytes { coffer_receive_with_fd(0, $0.baseAddress, 4, &fd) }
        guard count > 0, fd >= 0 else { return nil }
        var received = count
        while received < 4 {
            let more = header[received...].withUnsafeMutableBytes { recv(0, $0.baseAddress, $0.count, 0) }
            guard more > 0 else { return nil }
            received += more
        }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= 1 << 20 else { return nil }
        var body = [UInt8](repeating: 0, count: length)
        var offset = 0
        while offset < length {
            let more = body[offset...].withUnsafeMutableBytes { recv(0, $0.baseAddress, $0.count, 0) }
            guard more > 0 else { return nil }
            offset += more
        }
        guard let job = try? JSONDecoder().decode(DecodeJob.self, from: Data(body)) else { return nil }
        return (job, fd)
    }
}

/// Sends all of `bytes` on the stream socket `socket` (both ends of a decoder's socket use it);
/// `false` when the other end is gone. No SIGPIPE.
func sendAll(_ bytes: [UInt8], on socket: Int32) -> Bool {
    var sent = 0
    while sent < bytes.count {
        let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return false }
        sent += count
    }
    return true
}
