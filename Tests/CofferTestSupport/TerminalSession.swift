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

    /// Starts `command` in a `columns`×`rows` terminal with exactly `environment` (plus
    /// `TERM` from tmux).
    public init(_ command: [String], environment: [String: String], columns: Int = 120, rows: Int = 40) throws {
        guard Self.tmux != nil else { throw Failure("tmux is not installed (.ci/run installs it)") }
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        // The tmux server starts here and keeps whatever descriptors it inherits: it must
        // not get a pipe this process waits to see closed.
        try run(["-f", "/dev/null", "new-session", "-d", "-s", target, "-x", "\(columns)", "-y", "\(rows)",
                 "--", "/usr/bin/env", "-i"] + assignments + command, readOutput: false)
    }

    deinit { close() }

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
    public var isRunning: Bool { (try? run(["has-session", "-t", target])) != nil }

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

    /// Waits until the program has ended.
    public func waitForExit(timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !isRunning { return }
            usleep(20_000)
        }
        throw Failure("still running; the screen was:\n\(screen())")
    }

    /// Runs tmux and waits for it. (Foundation's `Process` can miss the exit of a child
    /// as short-lived as a tmux client, so this spawns and reaps it directly.)
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
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
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
