import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program running in a real pseudo-terminal, driven through tmux: keys go in with
/// `send-keys`, the screen comes out with `capture-pane`.
///
/// Each session has a tmux server of its own (`-L`), so tests never touch a user's tmux. It
/// belongs to the test that started it (``ProcessOwner``): the server and the program in its
/// pane are ended when the test ends, if not before.
public final class TerminalSession: OwnedResource, @unchecked Sendable {
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
        // The program carries the harness's marks too, for CI's check for leftover processes.
        let environment = environment.merging(TestProcess.marks) { $1 }
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        // Ctrl-C goes to the whole foreground group: the shell must survive it (a handler,
        // unlike an ignored signal, is not inherited by the program).
        let wrapper = ["/bin/sh", "-c", "trap : INT; \"$@\"; echo $? > '\(statusFile)'", "sh"]
        // The tmux server starts here and keeps whatever descriptors it inherits: it must
        // not get a pipe this process waits to see closed.
        try run(["-f", "/dev/null", "new-session", "-d", "-s", target, "-x", "\(columns)", "-y", "\(rows)", "--"]
                + wrapper + ["/usr/bin/env", "-i"] + assignments + command, readOutput: false)
        let ids = (try? run(["display-message", "-p", "-t", target, "#{pid} #{pane_pid}"])) ?? ""
        let numbers = ids.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        if numbers.count == 2 { (serverPID, panePID) = (numbers[0], numbers[1]) }
        ProcessOwner.current?.adopt(self)
    }

    /// The tmux server's process id, and the pane's (the wrapper shell, leading the pane's group).
    private var serverPID: Int32?
    private var panePID: Int32?

    deinit {
        close()
        unlink(statusFile)
    }

    /// Ends the session and its tmux server.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = try? run(["kill-server"], check: false)
        // The server sends the pane's group SIGHUP as it goes; whatever is left is killed — but
        // only a process that is still this session's (its id may be another's by now: neither
        // is this process's child, so nothing keeps their ids), told by the harness's mark.
        let deadline = ContinuousClock.now + .seconds(3)
        let ids = [serverPID, panePID].compactMap { $0 }
        while ids.contains(where: { Self.isOurs($0) }) && ContinuousClock.now < deadline {
            usleep(10_000)
        }
        if let panePID, Self.isOurs(panePID) { _ = kill(-panePID, SIGKILL) }
        if let serverPID, Self.isOurs(serverPID) { _ = kill(serverPID, SIGKILL) }
    }

    private let closed = Atomic<Bool>(false)

    /// Whether `pid` runs, and carries this test process's mark (``TestProcess/marks``).
    private static func isOurs(_ pid: Int32) -> Bool {
        guard !isZombie(pid), let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
        let mark = Data("\(TestProcess.marker)=\(getpid())".utf8)
        return environment.split(separator: 0).contains { Data($0) == mark }
    }

    public func end() { close() }

    private static func isZombie(_ pid: Int32) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return false }
        return text[text.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
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

    /// Runs tmux and waits for it (up to a minute).
    @discardableResult
    private func run(_ arguments: [String], check: Bool = true, readOutput: Bool = true) throws -> String {
        // The tmux server is forked from the first client and keeps whatever descriptors that
        // client had: the one that starts it gets no pipe this process waits to see closed.
        let result = try TestProcess.run([Self.tmux ?? "/usr/bin/tmux", "-L", socket] + arguments, timeout: 60,
                                         output: readOutput ? .collected : .discarded, errors: .discarded)
        if check && result.status != 0 {
            throw Failure("tmux \(arguments.first ?? "") failed with status \(result.status)")
        }
        return result.outputText
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
