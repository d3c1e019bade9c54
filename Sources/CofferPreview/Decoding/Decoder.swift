import CCofferSystem
import CofferCore
import CofferRuntime
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where untrusted files are decoded: in a child process bounded in processor time, memory
/// and wall-clock time, killed when the work is cancelled — or, for a program that has not
/// said which executable can decode (a test, an application without ``CofferApplication``),
/// in this process.
///
/// A 5 KB PDF can keep poppler busy for hours and a 2 MB PNG can ask for gigabytes: decoding
/// is where a hostile file reaches furthest, so it runs where it can be stopped. `coffer`
/// decodes in a copy of itself started as `coffer --coffer-decoder` (``DecoderWorker``).
public enum Decoder {
    /// The bounds of one decoding in a child process.
    public struct Limits: Sendable {
        /// Processor time (`RLIMIT_CPU`): the child is killed past it.
        public var cpuSeconds = 20
        /// Wall-clock time, from start to answer: the child is killed past it.
        public var wallSeconds = 30
        /// Address space (`RLIMIT_AS`): allocations past it fail.
        public var memoryBytes = 1 << 30
        /// The most bytes an answer may have (a 4096-pixel PNG thumbnail is far smaller).
        public var answerBytes = 128 << 20

        public init() {}
    }

    private static let configuration = Mutex<(executable: String?, limits: Limits)>((nil, Limits()))
    /// Decoders running at once in the whole process: one per core, so that many requests
    /// (a folder of PDFs, a client asking a hundred thumbnails) cost that many at a time.
    private static let running = DispatchSemaphore(value: max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// Decodes in child processes started from `executable` (a program that runs
    /// ``DecoderWorker/main(_:)`` when given ``DecoderWorker/argument``), within `limits`.
    public static func useChildProcesses(executable: String, limits: Limits = Limits()) {
        configuration.withLock { $0 = (executable, limits) }
    }

    /// Decodes in this process again (tests that look inside a decoder).
    public static func useThisProcess() {
        configuration.withLock { $0.executable = nil }
    }

    /// Whether decoding runs in child processes now.
    public static var usesChildProcesses: Bool { configuration.withLock { $0.executable != nil } }

    /// Does `job` on the file open at `fd` (read from its start; the descriptor stays the
    /// caller's). Cancelling `cancellation` stops it: the child is killed at once.
    /// - Throws: `tooLarge` (`preview-too-costly`) when the child ran out of time or memory,
    ///   `cancelled` when cancelled.
    static func run(_ job: DecodeJob, on fd: Int32, cancellation: CancellationFlag,
                    path: VirtualPath) throws(CofferError) -> DecodeAnswer {
        let (executable, limits) = configuration.withLock { $0 }
        guard let executable else { return job.perform(on: fd, cancellation: cancellation, path: path) }
        while running.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            if cancellation.isCancelled { throw CofferError(.cancelled, path: path) }
        }
        defer { running.signal() }
        return try ChildDecoding(executable: executable, limits: limits, path: path)
            .run(job, on: fd, cancellation: cancellation)
    }
}

/// One child process at work on one job.
private struct ChildDecoding {
    let executable: String
    let limits: Decoder.Limits
    let path: VirtualPath

    /// What the child is given of the environment: where fonts and caches are, nothing else.
    static let passedOn = ["HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_DIRS", "FONTCONFIG_FILE",
                           "FONTCONFIG_PATH", "LANG", "LC_ALL"]

    func run(_ job: DecodeJob, on fd: Int32, cancellation: CancellationFlag) throws(CofferError) -> DecodeAnswer {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw CofferError.lastSystemError("lseek", path: path) }
        let request: String
        do { request = String(decoding: try JSONEncoder().encode(job), as: UTF8.self) } catch {
            throw CofferError(.invalidArgument, path: path, detail: "decode job")
        }
        var pipeEnds: [Int32] = [-1, -1]
        // Neither end goes to another program started meanwhile; the child gets its copy by dup2.
        guard coffer_pipe_cloexec(&pipeEnds) == 0 else { throw CofferError.lastSystemError("pipe2", path: path) }
        let (reading, writing) = (pipeEnds[0], pipeEnds[1])
        defer { close(reading) }
        let pid: pid_t
        do throws(CofferError) {
            pid = try spawn(request: request, input: fd, output: writing)
        } catch {
            close(writing)
            throw error
        }
        close(writing)
        var answer: [UInt8] = []
        let ending = collect(from: reading, into: &answer, child: pid, cancellation: cancellation)
        let status = reap(pid)
        switch ending {
        case .cancelled: throw CofferError(.cancelled, path: path)
        case .tooLong, .tooLarge: throw CofferError(.tooLarge, path: path, detail: "preview-too-costly")
        case .finished: break
        }
        // Killed for its processor time, or ended by an allocation that failed: too costly.
        guard let status, status.exited, status.code == 0 else {
            throw CofferError(.tooLarge, path: path, detail: "preview-too-costly")
        }
        do {
            return try JSONDecoder().decode(DecodeAnswer.self, from: Data(answer))
        } catch {
            throw CofferError(.corruptFile, path: path, detail: "thumbnail-failed")
        }
    }

    private func spawn(request: String, input: Int32, output: Int32) throws(CofferError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Signals as a new program has them: none blocked, the usual actions.
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGXCPU] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let environment = ProcessInfo.processInfo.environment
        var variables = Self.passedOn.compactMap { name in environment[name].map { "\(name)=\($0)" } }
        // One malloc arena and one libvips worker: the address-space bound is meant for the
        // image, not for per-thread reservations.
        variables += ["MALLOC_ARENA_MAX=1", "VIPS_CONCURRENCY=1"]
        let arguments = [executable, DecoderWorker.argument, request, String(getpid()), String(limits.cpuSeconds),
                         String(limits.memoryBytes)]
        var pid = pid_t()
        // NULL-terminated arrays of C strings, as execve takes them.
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw CofferError(.unsupported, path: path, detail: "the decoder (\(executable)) cannot be started: \(String(cString: strerror(status)))")
        }
        return pid
    }

    private enum Ending { case finished, cancelled, tooLong, tooLarge }

    /// Reads the answer until the child closes it, killing the child when the caller
    /// cancels, the wall-clock limit passes or the answer grows past its bound.
    private func collect(from fd: Int32, into answer: inout [UInt8], child: pid_t,
                         cancellation: CancellationFlag) -> Ending {
        let deadline = ContinuousClock.now + .seconds(limits.wallSeconds)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            if cancellation.isCancelled { kill(child, SIGKILL); return .cancelled }
            if ContinuousClock.now >= deadline { kill(child, SIGKILL); return .tooLong }
            poller.revents = 0
            let ready = poll(&poller, 1, 50)
            if ready < 0 && errno != EINTR { kill(child, SIGKILL); return .tooLong }
            guard ready > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                kill(child, SIGKILL)
                return .tooLong
            }
            if count == 0 { return .finished }
            answer += buffer[0..<count]
            if answer.count > limits.answerBytes { kill(child, SIGKILL); return .tooLarge }
        }
    }

    /// Waits for the child to end (a second at most after its answer: then it is killed).
    private func reap(_ pid: pid_t) -> (exited: Bool, code: Int32)? {
        var status: Int32 = 0
        let deadline = ContinuousClock.now + .seconds(1)
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { break }
            if done < 0 && errno != EINTR { return nil }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return nil
            }
            usleep(2_000)
        }
        let exited = status & 0x7f == 0
        return (exited, exited ? (status >> 8) & 0xff : 0)
    }
}
