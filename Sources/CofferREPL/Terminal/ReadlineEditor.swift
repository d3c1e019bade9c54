import CReadline
import CofferRuntime
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A ``LineEditor`` on GNU readline: line editing, history, and Tab completion.
///
/// readline keeps its state in globals and calls back through plain C function pointers,
/// so this is the one file that touches it. Every readline call happens on `queue`, one
/// at a time; the callbacks reach the current read through the file-private state below,
/// which only that queue touches.
///
/// readline runs in its callback mode: a `poll` loop waits on the terminal and on a pipe
/// that ``interrupt()`` and ``endInput()`` write to, so Ctrl-C is handled as an ordinary
/// event (clear the line, or end an interruptible read) and never inside a signal handler.
public final class ReadlineEditor: LineEditor, @unchecked Sendable {
    // `queue` serialises all readline calls; the descriptors never change after `init`.
    private let queue = DispatchQueue(label: "coffer.readline", qos: .userInteractive)
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let reading = Atomic<Bool>(false)

    /// Sets readline up for Coffer. History is bounded to `historyLimit` entries.
    public init(historyLimit: Int = 1000) {
        Self.useUTF8()
        let fds = (try? ChildProcess.pipe()) ?? (read: -1, write: -1)
        for fd in [fds.read, fds.write] where fd >= 0 { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        wakeRead = fds.read
        wakeWrite = fds.write
        queue.sync {
            rl_initialize()
            coffer_rl_configure(tabCommand)
            stifle_history(Int32(clamping: historyLimit))
        }
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    public func readLine(prompt: String, completion: (@Sendable (String) -> Completion)?,
                         interruptible: Bool) async -> LineInput {
        await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: self.read(prompt: prompt, completion: completion,
                                                         interruptible: interruptible))
            }
        }
    }

    public func addToHistory(_ line: String) {
        queue.async { add_history(line) }
    }

    public func interrupt() -> Bool { wake(with: Self.interruptByte) }

    public func endInput() -> Bool { wake(with: Self.endByte) }

    private static let interruptByte: UInt8 = 3
    private static let endByte: UInt8 = 4

    private func wake(with byte: UInt8) -> Bool {
        guard reading.load(ordering: .acquiring) else { return false }
        var byte = byte
        _ = write(wakeWrite, &byte, 1)
        return true
    }

    /// The blocking read, on `queue`.
    private func read(prompt: String, completion: (@Sendable (String) -> Completion)?,
                      interruptible: Bool) -> LineInput {
        drainWakePipe()
        received = nil
        activeCompletion = completion
        lastAmbiguousTab = nil
        defer { activeCompletion = nil }
        reading.store(true, ordering: .releasing)
        defer { reading.store(false, ordering: .releasing) }

        rl_callback_handler_install(prompt, lineHandler)
        var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        while received == nil {
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                received = .endOfInput
                break
            }
            if fds[1].revents != 0 {
                let events = drainWakePipe()
                if events.contains(Self.endByte) {
                    coffer_rl_end_line("")
                    received = .endOfInput
                    break
                }
                if interruptible {
                    coffer_rl_end_line("^C")
                    received = .interrupted
                    break
                }
                coffer_rl_abandon_line()
                lastAmbiguousTab = nil
                continue
            }
            if fds[0].revents != 0 { rl_callback_read_char() }
        }
        rl_callback_handler_remove()
        return received ?? .endOfInput
    }

    /// Empties the wake pipe; returns the bytes that were in it.
    @discardableResult
    private func drainWakePipe() -> [UInt8] {
        var events: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = Glibc.read(wakeRead, &buffer, buffer.count)
            guard count > 0 else { return events }
            events += buffer[..<count]
        }
    }

    /// readline decodes keys by the C library's locale: without a UTF-8 one it would show
    /// Chinese input as octal escapes. Coffer speaks UTF-8, so it asks for a UTF-8
    /// character type even when the environment names none.
    private static func useUTF8() {
        if setlocale(LC_CTYPE, "") != nil, let codeset = nl_langinfo(nl_item(CODESET)),
           String(cString: codeset).uppercased().filter({ $0 != "-" }) == "UTF8" {
            return
        }
        _ = setlocale(LC_CTYPE, "C.UTF-8")
    }
}

// MARK: State reached from readline's C callbacks (touched only on the editor's queue)

private nonisolated(unsafe) var received: LineInput?
private nonisolated(unsafe) var activeCompletion: (@Sendable (String) -> Completion)?
/// The line and cursor of the last Tab that found several matches and could add nothing:
/// a second Tab on the same line lists the matches, as in bash.
private nonisolated(unsafe) var lastAmbiguousTab: (line: [UInt8], point: Int)?

/// Called by readline with a finished line (`nil` for Ctrl-D). It removes itself at once:
/// left installed, readline would start the next line with the old prompt.
private let lineHandler: @convention(c) (UnsafeMutablePointer<CChar>?) -> Void = { line in
    rl_callback_handler_remove()
    guard let line else {
        received = .endOfInput
        return
    }
    received = .line(String(decoding: UnsafeRawBufferPointer(start: line, count: strlen(line)), as: UTF8.self))
    free(line)
}

private let tabCommand: @convention(c) (Int32, Int32) -> Int32 = { _, _ in
    completeAtPoint()
    return 0
}

/// Tab: complete the word before the cursor, or list the matches on a second Tab.
private func completeAtPoint() {
    guard let complete = activeCompletion else {
        rl_ding()
        return
    }
    let point = Int(coffer_rl_point())
    let line = currentLine()
    guard point <= line.count, let prefix = String(validating: line[..<point], as: UTF8.self) else {
        rl_ding()
        return
    }
    let completion = complete(prefix)
    if let replacement = completion.replacement {
        coffer_rl_replace_text(Int32(completion.start), Int32(point), replacement)
        // Several matches still: the next Tab lists them.
        lastAmbiguousTab = completion.candidates.count > 1 ? (currentLine(), Int(coffer_rl_point())) : nil
        return
    }
    guard completion.candidates.count > 1 else {
        rl_ding()
        return
    }
    if let last = lastAmbiguousTab, last.line == line, last.point == point {
        showList(completion.candidates)
    } else {
        rl_ding()
        lastAmbiguousTab = (line, point)
    }
}

private func currentLine() -> [UInt8] {
    Array(UnsafeRawBufferPointer(start: coffer_rl_line_buffer(), count: Int(coffer_rl_end())))
}

private func showList(_ candidates: [String]) {
    var matches: [UnsafeMutablePointer<CChar>?] = [strdup("")] + candidates.map { strdup($0) }
    let width = candidates.reduce(0) { max($0, Formatting.width($1)) }
    matches.withUnsafeMutableBufferPointer { buffer in
        coffer_rl_show_list(buffer.baseAddress!, Int32(candidates.count), Int32(width))
    }
    for match in matches { free(match) }
}
