public import CCofferSystem
public import CofferCore
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A program Coffer started: a decoder, the user's editor, an application that opens a file,
/// a desktop tool.
///
/// Every child is started the same way, from whichever thread asks:
/// - it inherits only the descriptors it is given as standard input, output and error; every
///   other descriptor is closed in the child, so no pipe or socket of this process (one another
///   thread is just making, say) stays open in it;
/// - its signals are as a new program's: none blocked, every one at its default action. A
///   Swift worker thread blocks signals, and a child inherits the mask of the thread that
///   started it: without this it would ignore `SIGTERM`;
/// - it can lead a process group (or a session) of its own, so that it and whatever it starts
///   are signalled together.
///
/// Whoever starts a child waits for it (``wait()``, ``wait(timeout:)``) or hands it to
/// ``reapWhenEnded(_:)``; a child nobody waits for stays a zombie until Coffer ends.
public struct ChildProcess: Sendable {
    /// What the child gets as one of its standard descriptors.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// This process's own descriptor of the same number (a terminal, say).
        case inherited
        /// A descriptor of this process (a pipe's end): the child gets a copy of it.
        case descriptor(Int32)
    }

    /// Which process group the child is in.
    public enum Grouping: Sendable {
        /// This process's: the terminal's Ctrl-C reaches it too (an editor in the foreground).
        case inherited
        /// A group of its own, led by the child: ``signal(_:)`` reaches its own children too.
        case ownGroup
        /// A session of its own, away from this process's terminal (an application that outlives
        /// the command that opened a file with it).
        case ownSession
    }

    /// The child's process id.
    public let pid: pid_t
    /// Whether the child leads a group of its own, so that signals go to the whole group.
    public let leadsGroup: Bool

    /// Starts `arguments[0]` (a path, or with `searchingPath` a name looked up in `PATH`) with
    /// `arguments` as its argument vector.
    ///
    /// - Parameters:
    ///   - environment: its variables as `NAME=value`; `nil` for this process's own.
    ///   - workingDirectory: the folder it starts in; `nil` for this process's.
    /// - Throws: `noSuchFile` when there is no such program, or the error `posix_spawn` gave.
    public static func start(_ arguments: [String], environment: [String]? = nil,
                             standardInput: Stream = .null, standardOutput: Stream = .null,
                             standardError: Stream = .null, workingDirectory: String? = nil,
                             grouping: Grouping = .inherited, searchingPath: Bool = false) throws(CofferError) -> ChildProcess {
        precondition(!arguments.isEmpty, "a child needs a program")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, stream) in [standardInput, standardOutput, standardError].enumerated() {
            let target = Int32(number)
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", number == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherited: break
            // dup2 clears close-on-exec on the copy; a descriptor already at its number keeps
            // its flag, so it is copied elsewhere first by whoever made it (pipes never are 0–2).
            case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        // Nothing else crosses: whatever this process has open (close-on-exec or not, made by
        // Coffer or by a library) stays here.
        let closing = coffer_spawn_close_from(&actions, 3)
        guard closing == 0 else { throw CofferError.system(closing, "posix_spawn", path: nil) }
        if let workingDirectory {
            let changing = coffer_spawn_change_directory(&actions, workingDirectory)
            guard changing == 0 else { throw CofferError.system(changing, "posix_spawn", path: nil) }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), every = sigset_t()
        sigemptyset(&none)
        sigfillset(&every)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &every)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        switch grouping {
        case .inherited: break
        case .ownGroup:
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        case .ownSession:
            flags |= coffer_spawn_new_session_flag()
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid = pid_t()
        func spawn(_ variables: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
            searchingPath ? posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, variables)
                : posix_spawn(&pid, arguments[0], &actions, &attributes, argv, variables)
        }
        let status = if let envp { envp.withUnsafeBufferPointer { spawn($0.baseAddress!) } } else { spawn(environ) }
        guard status == 0 else { throw CofferError.system(status, "posix_spawn", path: nil) }
        return ChildProcess(pid: pid, leadsGroup: grouping != .inherited)
    }

    /// A pipe whose ends are both closed on exec (`pipe2(O_CLOEXEC)`, in one step): one end is
    /// given to a child as a ``Stream/descriptor(_:)``, the other kept.
    public static func pipe() throws(CofferError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard coffer_pipe_cloexec(&fds) == 0 else { throw CofferError.lastSystemError("pipe2", path: nil) }
        return (fds[0], fds[1])
    }

    /// Sends `signal` to the child, and to its whole group when it leads one.
    public func signal(_ signal: Int32) {
        _ = Glibc.kill(leadsGroup ? -pid : pid, signal)
    }

    /// Waits until the child has ended and reaps it.
    /// - Returns: its exit status, or 128 + the signal that ended it, as a shell reports it.
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return 128 + SIGKILL }
        }
        return Self.exitCode(status)
    }

    /// Waits up to `timeout` for the child to end, reaping it if it did.
    /// - Returns: as ``wait()``, or `nil` when it is still running.
    public func wait(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var pause: UInt32 = 500  // microseconds, doubling to 20 ms
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return Self.exitCode(status) }
            if reaped < 0 && errno != EINTR { return 128 + SIGKILL }  // not ours any more
            guard ContinuousClock.now < deadline else { return nil }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Reaps the child when it ends, without a thread waiting for it (a pidfd watched by
    /// Dispatch), then calls `ended` with its exit status. For a child that lives on its own,
    /// such as an application opened on a file.
    public func reapWhenEnded(_ ended: @escaping @Sendable (Int32) -> Void = { _ in }) {
        let pidfd = coffer_pidfd_open(pid)
        guard pidfd >= 0 else {
            // Kernels before 5.3: a thread of its own waits.
            let child = self
            DispatchQueue.global().async { ended(child.wait()) }
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: .global())
        let child = self
        source.setEventHandler {
            source.cancel()
            ended(child.wait())
        }
        source.setCancelHandler { _ = Glibc.close(pidfd) }
        source.resume()
    }

    /// WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
    public static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}

extension ChildProcess {
    /// Runs `arguments` with its output read into memory (up to `limit` bytes), its errors
    /// discarded and nothing on its input, for at most `timeout`: a desktop tool asked a
    /// question.
    /// - Returns: its exit status and output; `nil` when it could not be started or overran
    ///   its time (it is then killed, with its group).
    public static func output(of arguments: [String], environment: [String]? = nil, searchingPath: Bool = false,
                              timeout: Duration = .seconds(30), limit: Int = 1 << 20) -> (status: Int32, output: [UInt8])? {
        guard let (readEnd, writeEnd) = try? pipe() else { return nil }
        let child: ChildProcess
        do {
            child = try start(arguments, environment: environment, standardOutput: .descriptor(writeEnd),
                              grouping: .ownGroup, searchingPath: searchingPath)
        } catch {
            _ = Glibc.close(readEnd)
            _ = Glibc.close(writeEnd)
            return nil
        }
        _ = Glibc.close(writeEnd)
        defer { _ = Glibc.close(readEnd) }
        let deadline = ContinuousClock.now + timeout
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        // Until the output ends, or a moment after the tool has: something it left running
        // may hold the pipe open, and is not waited for.
        var endedAt: ContinuousClock.Instant?
        reading: while ContinuousClock.now < deadline {
            if endedAt == nil, coffer_child_has_ended(child.pid, nil) == 1 { endedAt = ContinuousClock.now }
            if let endedAt, ContinuousClock.now - endedAt > .milliseconds(200) { break }
            var ready = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, 50)
            if polled < 0 && errno != EINTR { break }
            guard polled > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break reading }
            output += buffer[..<min(count, max(0, limit - output.count))]
        }
        while coffer_child_has_ended(child.pid, nil) == 0 && ContinuousClock.now < deadline { usleep(1000) }
        if coffer_child_has_ended(child.pid, nil) != 1 {
            // Past its time: killed, with what it started (its id is still its own until reaped).
            child.signal(SIGKILL)
            _ = child.wait()
            return nil
        }
        // Whatever it left behind in its group goes before it is reaped.
        child.signal(SIGKILL)
        return (child.wait(), output)
    }
}
