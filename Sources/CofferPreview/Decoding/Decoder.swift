import CCofferSystem
import CofferCore
import CofferRuntime
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where untrusted files are decoded: in child processes bounded in processor time, memory
/// and wall-clock time, killed when the work is cancelled — or, for a program that has not
/// said which executable can decode (a test, an application without ``CofferApplication``),
/// in this process.
///
/// A 5 KB PDF can keep poppler busy for hours and a 2 MB PNG can ask for gigabytes: decoding
/// is where a hostile file reaches furthest, so it runs where it can be stopped. `coffer`
/// decodes in copies of itself started as `coffer --coffer-decoder` (``DecoderWorker``). A
/// copy does one job at a time and is kept for the next (starting one and loading libvips
/// costs tens of milliseconds); one whose job goes wrong is killed and replaced.
public enum Decoder {
    /// The bounds of decoding in a child process.
    public struct Limits: Sendable {
        /// Processor time for one job: the child is killed past it.
        public var cpuSeconds = 20
        /// Wall-clock time for one job, from start to answer: the child is killed past it.
        public var wallSeconds = 30
        /// Address space (`RLIMIT_AS`) of a child: allocations past it fail.
        public var memoryBytes = 1 << 30
        /// The most bytes an answer may have (a 4096-pixel PNG thumbnail is far smaller).
        public var answerBytes = 128 << 20
        /// Jobs one child does before it is replaced (memory a decoder leaks stays bounded).
        public var jobsPerChild = 256
        /// How long a child may wait for work before it is let go.
        public var idleSeconds = 30

        public init() {}
    }

    private static let configuration = Mutex<(executable: String?, limits: Limits)>((nil, Limits()))
    private static let pool = DecoderPool(size: max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// Decodes in child processes started from `executable` (a program that runs
    /// ``DecoderWorker/main(_:)`` when given ``DecoderWorker/argument``), within `limits`.
    public static func useChildProcesses(executable: String, limits: Limits = Limits()) {
        configuration.withLock { $0 = (executable, limits) }
    }

    /// Does `job` on the file open at `fd` (read from its start; the descriptor stays the
    /// caller's). Cancelling `cancellation` stops it: the child is killed at once. At most one
    /// job per core runs at once; the others wait (and stay cancellable).
    /// - Throws: `tooLarge` (`preview-too-costly`) when the child ran out of time or memory,
    ///   `cancelled` when cancelled.
    static func run(_ job: DecodeJob, on fd: Int32, cancellation: CancellationFlag,
                    path: VirtualPath) throws(CofferError) -> DecodeAnswer {
        let (executable, limits) = configuration.withLock { $0 }
        guard let executable else { return job.perform(on: fd, cancellation: cancellation, path: path) }
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw CofferError.lastSystemError("lseek", path: path) }
        let worker = try pool.acquire(executable: executable, limits: limits, cancellation: cancellation, path: path)
        do throws(CofferError) {
            let answer = try worker.run(job, on: fd, limits: limits, cancellation: cancellation, path: path)
            pool.release(worker, limits: limits)
            return answer
        } catch {
            pool.discard(worker)
            throw error
        }
    }
}

/// The decoders of this process: at most `size` at work at once, the idle ones kept.
private final class DecoderPool: Sendable {
    private struct State {
        var idle: [DecoderChild] = []
        var busy = 0
    }
    private let size: Int
    private let state = Mutex(State())

    init(size: Int) { self.size = size }

    /// An idle child, a new one, or — when `size` are at work — the first to come free.
    func acquire(executable: String, limits: Decoder.Limits, cancellation: CancellationFlag,
                 path: VirtualPath) throws(CofferError) -> DecoderChild {
        while true {
            let taken = state.withLock { state -> (child: DecoderChild?, mayStart: Bool, stale: [DecoderChild]) in
                let now = ContinuousClock.now
                let stale = state.idle.filter { now - $0.lastUsed > .seconds(limits.idleSeconds) }
                state.idle.removeAll { now - $0.lastUsed > .seconds(limits.idleSeconds) }
                guard state.busy < size else { return (nil, false, stale) }
                state.busy += 1
                return (state.idle.popLast(), true, stale)
            }
            for child in taken.stale { child.kill() }
            if let child = taken.child { return child }
            if taken.mayStart {
                do throws(CofferError) {
                    return try DecoderChild(executable: executable, limits: limits, path: path)
                } catch {
                    state.withLock { $0.busy -= 1 }
                    throw error
                }
            }
            if cancellation.isCancelled { throw CofferError(.cancelled, path: path) }
            usleep(20_000)
        }
    }

    /// A child done with its job, kept for the next unless it has done enough.
    func release(_ child: DecoderChild, limits: Decoder.Limits) {
        let keep = child.jobs < limits.jobsPerChild
        state.withLock { state in
            state.busy -= 1
            if keep { state.idle.append(child) }
        }
        if !keep { child.kill() }
    }

    /// A child whose job went wrong: it is not used again.
    func discard(_ child: DecoderChild) {
        child.kill()
        state.withLock { $0.busy -= 1 }
    }
}

/// One decoder process and the socket its jobs and answers go through: a job is its length,
/// its JSON and the file's descriptor (SCM_RIGHTS); an answer is its length and its JSON.
private final class DecoderChild: @unchecked Sendable {
    let pid: pid_t
    /// The parent's end of the socket; the child has the other as its standard input.
    private let socket: Int32
    private(set) var jobs = 0
    private(set) var lastUsed = ContinuousClock.now
    private var ended = false

    /// The thread decoders are started from. It never ends, so a child's parent-death signal
    /// (which the kernel ties to the starting thread) fires only when the process ends.
    private static let spawner = DedicatedThread(name: "coffer.decoder.spawner")

    /// What the child is given of the environment: where fonts and caches are, nothing else.
    static let passedOn = ["HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_DIRS", "FONTCONFIG_FILE",
                           "FONTCONFIG_PATH", "LANG", "LC_ALL"]

    init(executable: String, limits: Decoder.Limits, path: VirtualPath) throws(CofferError) {
        var ends: [Int32] = [-1, -1]
        guard coffer_socketpair_cloexec(&ends) == 0 else { throw CofferError.lastSystemError("socketpair", path: path) }
        defer { close(ends[1]) }
        let environment = ProcessInfo.processInfo.environment
        // One malloc arena and one libvips worker: the address-space bound is meant for the
        // image, not for per-thread reservations.
        let variables = Self.passedOn.compactMap { name in environment[name].map { "\(name)=\($0)" } }
            + ["MALLOC_ARENA_MAX=1", "VIPS_CONCURRENCY=1"]
        let arguments = [executable, DecoderWorker.argument, String(getpid()), String(limits.cpuSeconds),
                         String(limits.memoryBytes)]
        let childEnd = ends[1]
        // Started from a thread that lives as long as the process: a child's PR_SET_PDEATHSIG
        // fires when the *thread* that started it ends, and Dispatch lets its idle threads go.
        let started = Self.spawner.run {
            Result { () throws(CofferError) in
                try ChildProcess.start(arguments, environment: variables, standardInput: .descriptor(childEnd))
            }
        }
        switch started {
        case .success(let child):
            self.pid = child.pid
        case .failure(let error):
            close(ends[0])
            throw CofferError(.unsupported, path: path,
                              detail: "the decoder (\(executable)) cannot be started: \(String(cString: strerror(error.errno ?? EIO)))")
        }
        self.socket = ends[0]
    }

    deinit { kill() }

    /// Ends the child (if it still runs) and waits for it.
    func kill() {
        guard !ended else { return }
        ended = true
        close(socket)
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    private enum Ending: Error { case cancelled, tooCostly, gone }

    func run(_ job: DecodeJob, on fd: Int32, limits: Decoder.Limits, cancellation: CancellationFlag,
             path: VirtualPath) throws(CofferError) -> DecodeAnswer {
        jobs += 1
        lastUsed = ContinuousClock.now
        let request: [UInt8]
        do { request = [UInt8](try JSONEncoder().encode(job)) } catch {
            throw CofferError(.invalidArgument, path: path, detail: "decode job")
        }
        do throws(Ending) {
            try send(request, with: fd)
            let answer = try receive(limits: limits, cancellation: cancellation)
            lastUsed = ContinuousClock.now
            do {
                return try JSONDecoder().decode(DecodeAnswer.self, from: Data(answer))
            } catch {
                throw Ending.gone
            }
        } catch .cancelled {
            throw CofferError(.cancelled, path: path)
        } catch {
            // Out of time, out of memory (an allocation failed and it ended), or an answer too large.
            throw CofferError(.tooLarge, path: path, detail: "preview-too-costly")
        }
    }

    private func send(_ request: [UInt8], with fd: Int32) throws(Ending) {
        var length = UInt32(request.count).bigEndian
        let header = withUnsafeBytes(of: &length) { [UInt8]($0) }
        let sent = header.withUnsafeBytes { coffer_send_with_fd(socket, $0.baseAddress, $0.count, fd) }
        guard sent == header.count, sendAll(request, on: socket) else { throw .gone }
    }

    /// Reads one answer, killing the child when the caller cancels, the job's time passes
    /// (wall clock, or its processor time as the kernel counts it) or the answer grows too large.
    private func receive(limits: Decoder.Limits, cancellation: CancellationFlag) throws(Ending) -> [UInt8] {
        let deadline = ContinuousClock.now + .seconds(limits.wallSeconds)
        let cpuAtStart = processorTicks()
        let ticksAllowed = Int64(limits.cpuSeconds) * Int64(sysconf(Int32(_SC_CLK_TCK)))
        var received: [UInt8] = []
        var expected: Int?
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        var checks = 0
        while expected.map({ received.count < $0 + 8 }) ?? true {
            if cancellation.isCancelled { kill(); throw .cancelled }
            if ContinuousClock.now >= deadline { kill(); throw .tooCostly }
            checks += 1
            if checks % 10 == 0, let cpuAtStart, let now = processorTicks(), now - cpuAtStart > ticksAllowed {
                kill()
                throw .tooCostly
            }
            poller.revents = 0
            let ready = poll(&poller, 1, 50)
            if ready < 0 && errno != EINTR { kill(); throw .gone }
            guard ready > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                kill()
                throw .gone
            }
            if count == 0 { kill(); throw .gone }  // it ended: killed by its limits, or a failed allocation
            received += buffer[0..<count]
            if expected == nil, received.count >= 8 {
                let length = received[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard length <= UInt64(limits.answerBytes) else { kill(); throw .tooCostly }
                expected = Int(length)
            }
        }
        return Array(received[8...])
    }

    /// The child's processor time so far, in clock ticks (`/proc/PID/stat`, user and system).
    private func processorTicks() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based), so 11 and 12 here.
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        return user + system
    }
}
