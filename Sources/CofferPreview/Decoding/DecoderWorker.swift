import CCofferSystem
import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The child side of ``Decoder``: a program started with ``argument`` reads one job from its
/// arguments and the file from its standard input, confines itself, decodes, writes the
/// answer to its standard output as JSON and exits.
///
/// `CofferApplication` runs it before anything else when its first argument is ``argument``,
/// so every program built on it (`coffer`, an application's own) can decode for itself.
public enum DecoderWorker {
    /// The first argument that makes a program a decoder.
    public static let argument = "--coffer-decoder"

    /// Runs the job in `arguments` (`[program, argument, JOB, PARENT-PID, CPU-SECONDS,
    /// MEMORY-BYTES]`); returns the exit status (0 when an answer was written).
    public static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 6, arguments[1] == argument,
              let job = try? JSONDecoder().decode(DecodeJob.self, from: Data(arguments[2].utf8)),
              let parent = pid_t(arguments[3]), let cpu = Int(arguments[4]), let memory = Int(arguments[5])
        else { return 2 }
        // Dies with its parent, gains no privileges; then bounded before the first byte is read.
        guard coffer_confine_child() == 0, getppid() == parent else { return 3 }
        var processor = rlimit(rlim_cur: rlim_t(cpu), rlim_max: rlim_t(cpu + 1))
        var space = rlimit(rlim_cur: rlim_t(memory), rlim_max: rlim_t(memory))
        var core = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &processor) == 0, setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &space) == 0,
              setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &core) == 0 else { return 3 }
        let path = (try? VirtualPath(parsing: "files:/")) ?? .root()
        let answer = job.perform(on: 0, cancellation: CancellationFlag(), path: path)
        guard let data = try? JSONEncoder().encode(answer) else { return 4 }
        var written = 0
        let bytes = [UInt8](data)
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if count < 0 { if errno == EINTR { continue }; return 5 }
            written += count
        }
        return 0
    }
}
