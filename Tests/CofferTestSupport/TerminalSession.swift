import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program running in a real pseudo-terminal, driven through tmux: keys go in with
/// `send-keys`, the screen comes out with `capture-pane`.
///
/// Each session has a tmux server of its own (`-L`), so tests never touch a user's tmux.
public final class TerminalSession {
    public static let tmux = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    private let socket = "coffer-test-\(getpid())-\(UUID().uuidString.prefix(8))"
    private let target = "coffer"

    /// Where the wrapper shell writes the program's exit status when it ends.
    private let statusFile = FileManager.default.temporaryDirectory
        .appendingPathComponent("coffer-test-status-\(UUID().uuidString)").path

    /// Starts `command` in a `columns`×`rows` terminal with exactly `environment`.
    ///
    /// A small shell runs it and records its exit status in a file: tmux can lose the
    /// status of a pane whose program ends just as its terminal closes.
    public init(_ command: [String], environment: [String: String], columns: Int = 120, rows: Int = 40) throws {
        guard Self.tmux != nil else { throw Failure("tmux is not installed (.ci/run installs it)") }
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        // Ctrl-C goes to the whole foreground group: the shell must survive it (a handler,
        // unlike an ignored signal, is not inherited by the program).
        let wrapper = ["/bin/sh", "-c", "trap : INT; \"$@\"; echo $? > '\(statusFile)'", "sh"]
        // The tmux server starts here and keeps whatever descriptors it inherits: it must
        // not get a pipe this process waits to see closed.
        try run(["-f", "/dev/null", "new-session", "-d", "-s", target, "-x", "\(columns)", "-y", "\(rows)", "--"]
                + wrapper + ["/usr/bin/env", "-i"] + assignments + command, readOutput: false)
    }

    deinit {
        close()
        unlink(statusFile)
    }

    /// Ends the session and its tmux server.
    public func close() {
        _ = try? run(["kill-server"], check: false)
    }

    /// Types `text` literally.
    public func type(_ text: String) throws {
        try run(["send-keys", "-t", target, "-l", text])
    }

    /// Presses keys by tmux name: `Enter`, `Tab`, `C-c`, `C-d`, `Up`.
    public func press(_ keys: String...) throws {
        try run(["send-keys", "-t", target] + keys)
    }

    /// The visible screen as text, trailing blank lines removed. With `escapes`, colour
    /// codes are kept.
    public func screen(escapes: Bool = false) -> String {
        let text = (try? run(["capture-pane", "-p", "-t", target] + (escapes ? ["-e"] : []))) ?? ""
        var lines = text.components(separatedBy: "\n")
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// The screen's last non-blank line.
    public var lastLine: String { screen().components(separatedBy: "\n").last ?? "" }

    /// Whether the program is still running.
    public var isRunning: Bool { exitStatus == nil }

    /// The program's process id: the child of the wrapper shell (`env` execs the program).
    public var processID: Int32? {
        guard let text = try? run(["display-message", "-p", "-t", target, "#{pane_pid}"]),
              let shell = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
              let children = try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
        else { return nil }
        return children.split(separator: " ").first.flatMap { Int32($0) }
    }

    /// The program's exit status once it has ended.
    public var exitStatus: Int32? {
        (try? String(contentsOfFile: statusFile, encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Waits until `condition` holds for the screen, for up to `timeout` seconds.
    /// - Returns: the last screen seen, for messages.
    @discardableResult
    public func wait(timeout: Double = 10, until condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = screen()
            if condition(last) { return last }
            usleep(20_000)
        }
        throw Failure("timed out; the screen was:\n\(last)")
    }

    /// Waits until the screen's last line is exactly `line` (a prompt, say).
    @discardableResult
    public func waitForLastLine(_ line: String, timeout: Double = 10) throws -> String {
        try wait(timeout: timeout) { screen in
            (screen.components(separatedBy: "\n").last ?? "").trimmingCharacters(in: .whitespaces)
                == line.trimmingCharacters(in: .whitespaces)
        }
    }

    /// Waits until the program has ended and its exit status is known.
    public func waitForExit(timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if exitStatus != nil { return }
            usleep(20_000)
        }
        throw Failure("still running; the screen was:\n\(screen())")
    }

    /// Runs tmux and waits for it, spawning and reaping it directly.
    @discardableResult
    private func run(_ arguments: [String], check: Bool = true, readOutput: Bool = true) throws -> String {
        let argv = [Self.tmux ?? "/usr/bin/tmux", "-L", socket] + arguments
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if readOutput {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        // The tmux server is forked from this client and inherits its signal mask and
        // dispositions; the test runner blocks SIGCHLD in its threads, and a server with
        // SIGCHLD blocked never reaps the program. Start tmux with a clean slate.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ)
        Glibc.close(fds[1])
        defer { Glibc.close(fds[0]) }
        guard spawned == 0 else { throw Failure("could not start tmux: error \(spawned)") }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data += buffer[..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        if check && exitStatus != 0 {
            throw Failure("tmux \(arguments.first ?? "") failed with status \(exitStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
