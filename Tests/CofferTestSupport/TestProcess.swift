import CCofferSystem
import CofferCore
import CofferRuntime
public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program a test started, owned by that test.
///
/// Every program a test runs is started here, the way the product starts its own children
/// (``ChildProcess``): its pipes are made close-on-exec in one step and it inherits no other
/// descriptor, its signals are a new program's, and it leads a process group of its own so
/// that it and its children are ended together. Its environment carries ``marks``
/// (`COFFER_TEST_CHILD=<this process's id>` and CI's step), which CI looks for when the tests are done.
///
/// Two ways to use it:
/// - ``run(_:input:environment:workingDirectory:timeout:)`` runs a program to its end, with a
///   deadline: when it passes, the program (and its group) is ended and the call throws a
///   ``ProcessTimeout`` naming the command, the time waited and the last lines of its errors.
/// - ``init(_:environment:workingDirectory:input:output:errors:)`` starts a program that runs
///   beside the test (a server). It belongs to the test that started it (``ProcessOwner``):
///   when that test ends, passed or failed, whatever it left running is ended and reaped.
public final class TestProcess: @unchecked Sendable {
    /// What becomes of the program's standard output or error.
    public enum Output: Sendable {
        /// Kept here: ``output`` and ``errors``.
        case collected
        /// `/dev/null`.
        case discarded
        /// Handed to `receive` as it comes, on the process's reading thread.
        case streamed(@Sendable (Data) -> Void)
    }

    /// The variable that marks a process the harness started.
    public static let marker = "COFFER_TEST_CHILD"

    /// The argument vector, for messages.
    public let command: [String]
    /// The process id (and its group's).
    public let pid: Int32
    /// When it started, for messages.
    public let started = ContinuousClock.now

    private let child: ChildProcess
    private let state = Mutex<State>(State())

    private struct State {
        var input: Int32 = -1
        var output = Data()
        var errors = Data()
        /// Its exit status once it has ended (seen without reaping it).
        var status: Int32?
        /// Reaped: from then on its id may be another process's, and it is never signalled.
        var reaped = false
        /// The reading thread stops once this is set and the pipes have nothing more for a moment.
        var abandoned = false
        var readerDone = false
    }

    /// Starts `arguments` (the first is the program: a path, or a name looked up in `PATH`)
    /// beside the test that calls this, which owns it.
    ///
    /// - Parameters:
    ///   - environment: exactly these variables (plus the marker); `nil` for the test's own.
    ///   - input: whether it gets a pipe on standard input (``write(_:)``, ``closeInput()``),
    ///     else `/dev/null`.
    /// - Throws: ``HarnessError`` outside a test that owns its processes (``OwnsProcesses``),
    ///   or when the program cannot be started.
    public init(_ arguments: [String], environment: [String: String]? = nil, workingDirectory: String? = nil,
                input: Bool = true, output: Output = .collected, errors: Output = .collected) throws {
        guard let owner = ProcessOwner.current else {
            throw HarnessError("\(Self.describe(arguments)) was started outside a test that owns its processes: "
                               + "give its suite the .ownsProcesses trait")
        }
        command = arguments
        Self.ignoreBrokenPipes
        // Each pipe as (the end kept here, the end the child gets); all made close-on-exec.
        var pipes: [(kept: Int32, given: Int32)?] = [nil, nil, nil]
        func makePipe(childReads: Bool) throws(CofferError) -> (kept: Int32, given: Int32) {
            let (readEnd, writeEnd) = try ChildProcess.pipe()
            return childReads ? (writeEnd, readEnd) : (readEnd, writeEnd)
        }
        do {
            if input { pipes[0] = try makePipe(childReads: true) }
            if case .discarded = output {} else { pipes[1] = try makePipe(childReads: false) }
            if case .discarded = errors {} else { pipes[2] = try makePipe(childReads: false) }
            func stream(_ index: Int) -> ChildProcess.Stream { pipes[index].map { .descriptor($0.given) } ?? .null }
            child = try ChildProcess.start(arguments, environment: Self.variables(environment),
                                           standardInput: stream(0), standardOutput: stream(1), standardError: stream(2),
                                           workingDirectory: workingDirectory, grouping: .ownGroup,
                                           searchingPath: !arguments[0].contains("/"))
        } catch {
            for pipe in pipes.compactMap({ $0 }) { _ = Glibc.close(pipe.kept); _ = Glibc.close(pipe.given) }
            throw HarnessError("\(Self.describe(arguments)) could not be started: \(error)")
        }
        for pipe in pipes.compactMap({ $0 }) { _ = Glibc.close(pipe.given) }
        pid = child.pid
        if let input = pipes[0] {
            _ = fcntl(input.kept, F_SETFL, fcntl(input.kept, F_GETFL) | O_NONBLOCK)
            state.withLock { $0.input = input.kept }
        }
        let readers = [pipes[1].map { Reader(fd: $0.kept, isOutput: true, use: output) },
                       pipes[2].map { Reader(fd: $0.kept, isOutput: false, use: errors) }].compactMap { $0 }
        Self.unreaped.withLock { _ = $0.insert(pid) }
        owner.adopt(self)
        Thread { [self] in pump(readers) }.start()
    }

    // MARK: Running to the end

    /// What a program run to its end did.
    public struct Result: Sendable {
        public var status: Int32
        public var output: Data
        public var errors: Data
        public var outputText: String { String(decoding: output, as: UTF8.self) }
        public var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Runs `arguments` to its end with `input` on its standard input, reading its output and
    /// errors (unless told otherwise), for at most `timeout` seconds.
    ///
    /// Everything it starts ends before this returns, so it needs no owner: it can run from a
    /// trait's condition or a static property.
    /// - Throws: ``ProcessTimeout`` when the deadline passes (the program and its group are
    ///   then ended), ``HarnessError`` when it cannot be started.
    public static func run(_ arguments: [String], input: Data = Data(), environment: [String: String]? = nil,
                           workingDirectory: String? = nil, timeout: Double = 300, output: Output = .collected,
                           errors: Output = .collected) throws -> Result {
        ignoreBrokenPipes
        let owner = ProcessOwner(name: describe(arguments))
        let process = try ProcessOwner.$current.withValue(owner) {
            try TestProcess(arguments, environment: environment, workingDirectory: workingDirectory,
                            output: output, errors: errors)
        }
        defer { owner.endAll() }
        let deadline = process.started + .milliseconds(Int(timeout * 1000))
        process.write(input, until: deadline)
        process.closeInput()
        let status = try process.waitForExit(until: deadline)
        try process.waitForReader(until: deadline)
        return process.state.withLock { Result(status: status, output: $0.output, errors: $0.errors) }
    }

    // MARK: Talking to it

    /// Writes `data` to its standard input, waiting while the pipe is full (until `deadline`,
    /// a minute from now unless given). A program that has closed its input just loses the rest.
    public func write(_ data: Data, until deadline: ContinuousClock.Instant? = nil) {
        guard !data.isEmpty else { return }
        let deadline = deadline ?? ContinuousClock.now + .seconds(60)
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count && ContinuousClock.now < deadline {
                let fd = state.withLock { $0.input }
                guard fd >= 0 else { return }
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && (errno == EAGAIN || errno == EINTR) {
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, 50)
                } else {
                    return
                }
            }
        }
    }

    /// Closes its standard input: the end of its input.
    public func closeInput() {
        let fd = state.withLock { state -> Int32 in
            defer { state.input = -1 }
            return state.input
        }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Sends `signal` to the program alone (unless it has been reaped: its id may be another's by then).
    public func signal(_ signal: Int32) {
        state.withLock { state in
            if !state.reaped { _ = kill(pid, signal) }
        }
    }

    /// Its standard output so far (when ``Output/collected``).
    public var output: Data { state.withLock { $0.output } }

    /// Its standard error so far, as text (when ``Output/collected``).
    public var errors: String { state.withLock { String(decoding: $0.errors, as: UTF8.self) } }

    /// Waits up to `timeout` seconds until `condition` holds for the output so far.
    /// - Throws: ``ProcessTimeout`` when it does not, or the program ended first.
    public func waitForOutput(timeout: Double = 30, _ what: String, until condition: (Data) -> Bool) throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let (output, done) = state.withLock { ($0.output, $0.readerDone) }
            if condition(output) { return }
            if done || ContinuousClock.now >= deadline {
                throw ProcessTimeout(self, waited: ContinuousClock.now - started, doing: done ? "\(what) (it ended first)" : what)
            }
            usleep(2000)
        }
    }

    // MARK: Its end

    /// Whether it is still running (a zombie counts as ended; it is reaped when it is ended).
    public var isRunning: Bool { reap() == nil }

    /// Its exit status once ended (128 + the signal that ended it), else `nil`.
    public var exitStatus: Int32? { reap() }

    /// Waits up to `timeout` seconds for it to end and returns its exit status.
    /// - Throws: ``ProcessTimeout``, after ending it (and its group).
    @discardableResult
    public func waitForExit(timeout: Double = 30) throws -> Int32 {
        try waitForExit(until: ContinuousClock.now + .milliseconds(Int(timeout * 1000)))
    }

    func waitForExit(until deadline: ContinuousClock.Instant) throws -> Int32 {
        while true {
            if let status = reap() { return status }
            if ContinuousClock.now >= deadline {
                let waited = ContinuousClock.now - started
                let seen = kernelState()
                end(grace: 1)
                throw ProcessTimeout(self, waited: waited, doing: "its exit", seen: seen)
            }
            usleep(2000)
        }
    }

    /// Waits for the reading thread to have read both pipes to their end.
    func waitForReader(until deadline: ContinuousClock.Instant) throws {
        while !state.withLock({ $0.readerDone }) {
            if ContinuousClock.now >= deadline {
                let waited = ContinuousClock.now - started
                let seen = kernelState()
                end(grace: 1)
                throw ProcessTimeout(self, waited: waited, doing: "the end of its output (a process it started keeps it open)",
                                     seen: seen)
            }
            usleep(1000)
        }
    }

    /// Ends it politely: its input closed, then `SIGTERM` to its group, then after `grace`
    /// seconds `SIGKILL`; then reaps it. Its group is sent `SIGKILL` last in any case, so a
    /// child it left behind goes too.
    public func end(grace: Double = 3) {
        beginEnding()
        finishEnding(by: ContinuousClock.now + .milliseconds(Int(grace * 1000)))
    }

    /// The first step of ``end(grace:)``, for ending many at once.
    func beginEnding() {
        closeInput()
        // Signalled only while not reaped: its id is then still its own (``reap()``).
        state.withLock { state in
            if !state.reaped && coffer_child_has_ended(pid, nil) == 0 { _ = kill(-pid, SIGTERM) }
        }
    }

    /// The rest of ``end(grace:)``: waits until `deadline`, then kills its group and reaps it.
    ///
    /// It is reaped only here, after its group — whatever it left running — has been killed:
    /// until then it stays a zombie once it ends, and its id, and its group's, cannot go to
    /// another process (another test's child could otherwise get them, and be killed).
    func finishEnding(by deadline: ContinuousClock.Instant) {
        while reap() == nil && ContinuousClock.now < deadline { usleep(2000) }
        state.withLock { state in
            guard !state.reaped else { return }
            _ = kill(-pid, SIGKILL)
            // After SIGKILL the kernel ends it at once, unless it sits in an uninterruptible wait.
            let status = child.wait(timeout: .seconds(10))
            state.status = state.status ?? status
            state.reaped = status != nil
            state.abandoned = true
        }
        if state.withLock({ $0.reaped }) { _ = Self.unreaped.withLock { $0.remove(pid) } }
    }

    /// What the kernel says of it now, for a timeout's message: its state (`R` running, `S`
    /// sleeping, `D` in an uninterruptible wait — a SIGKILL waits for it to end —, `Z` ended and
    /// not reaped) and where it waits; or that it is no child of this process any more.
    func kernelState() -> String {
        var status: Int32 = 0
        if coffer_child_has_ended(pid, &status) < 0 { return "waitid: \(String(cString: strerror(errno)))" }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return "no /proc entry" }
        let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
        let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
        return "state \(state), waiting in \(wchan.isEmpty ? "-" : wchan)"
    }

    /// Its exit status if it has ended, seen without reaping it (`WNOWAIT`; ``finishEnding(by:)``
    /// reaps it).
    private func reap() -> Int32? {
        state.withLock { state -> Int32? in
            if let status = state.status { return status }
            var status: Int32 = 0
            guard coffer_child_has_ended(pid, &status) == 1 else { return nil }
            state.status = status
            return status
        }
    }

    // MARK: Reading

    /// Reads the output pipes until both end, or, once the process has been ended, until they
    /// stay quiet a moment (a grandchild that escaped its group may hold them): no thread is
    /// left blocked on a pipe.
    private struct Reader {
        var fd: Int32
        var isOutput: Bool
        var use: Output
    }

    private func pump(_ readers: [Reader]) {
        var open = readers
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var quietSince: ContinuousClock.Instant?
        while !open.isEmpty {
            var polled = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), 100)
            if ready <= 0 {
                if state.withLock({ $0.abandoned }) {
                    let since = quietSince ?? ContinuousClock.now
                    quietSince = since
                    if ContinuousClock.now - since > .seconds(1) { break }
                }
                continue
            }
            quietSince = nil
            var closed: Set<Int32> = []
            for (reader, entry) in zip(open, polled) where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(reader.fd, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else {
                    closed.insert(reader.fd)
                    continue
                }
                let data = Data(buffer[..<count])
                switch reader.use {
                case .collected: state.withLock { if reader.isOutput { $0.output += data } else { $0.errors += data } }
                case .streamed(let receive): receive(data)
                case .discarded: break
                }
            }
            for fd in closed { _ = Glibc.close(fd) }
            open.removeAll { closed.contains($0.fd) }
        }
        for reader in open { _ = Glibc.close(reader.fd) }
        state.withLock { $0.readerDone = true }
    }

    // MARK: Helpers

    /// The test process's environment, or `environment`, with the marks CI looks for.
    static func variables(_ environment: [String: String]?) -> [String] {
        var variables = environment ?? ProcessInfo.processInfo.environment
        variables.merge(marks) { $1 }
        return variables.map { "\($0.key)=\($0.value)" }
    }

    /// `COFFER_TEST_CHILD=<this process>`, and the CI step this runs in (`COFFER_CI_STEP`,
    /// from `.ci/step.py`), which every child carries even in an environment of its own.
    public static var marks: [String: String] {
        var marks = [marker: String(getpid())]
        marks["COFFER_CI_STEP"] = ProcessInfo.processInfo.environment["COFFER_CI_STEP"]
        return marks
    }

    /// The command as a shell would show it, shortened for messages.
    static func describe(_ arguments: [String]) -> String {
        let words = arguments.enumerated().map { index, word in
            let shown = index == 0 ? (word as NSString).lastPathComponent : word
            return shown.contains(" ") || shown.isEmpty ? "'\(shown)'" : shown
        }
        let text = words.joined(separator: " ")
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    /// Writing to a pipe whose reader has gone must fail with EPIPE, not end the test process.
    private static let ignoreBrokenPipes: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    /// Every process started here and not yet reaped, for the last-resort sweep at exit.
    static let unreaped = Mutex<Set<Int32>>([])
}

/// A deadline that passed: which command, how long it was waited for, what for, and the last
/// lines it wrote on standard error.
public struct ProcessTimeout: Error, CustomStringConvertible {
    public var description: String

    init(_ process: TestProcess, waited: Duration, doing what: String, seen: String? = nil) {
        let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
        let lines = process.errors.split(separator: "\n", omittingEmptySubsequences: true).suffix(10)
        description = "\(TestProcess.describe(process.command)) (pid \(process.pid)): waited "
            + String(format: "%.1f s", seconds) + " for \(what)" + (seen.map { " (the kernel: \($0))" } ?? "")
            + (lines.isEmpty ? "; it wrote nothing on standard error" : "; the last lines of its standard error:\n"
               + lines.map { "    " + $0 }.joined(separator: "\n"))
    }
}

/// The harness was misused, or could not do what a test asked.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
