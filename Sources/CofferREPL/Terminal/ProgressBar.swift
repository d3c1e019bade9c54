public import CofferCore
import CofferRuntime
import FileService
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress bar on standard error for a long operation.
///
/// Nothing is drawn for work that ends within `delay` (half a second by default), so quick
/// commands stay quiet; after that the bar is redrawn at most ten times a second and is
/// erased by ``finish()``. Updates may come from any thread.
public final class ProgressBar: Sendable {
    /// Hand this to the service; its updates drive the bar.
    public let reporter: ProgressReporter
    private let renderer: Renderer

    /// - Parameters:
    ///   - label: what is happening (“Copying”).
    ///   - write: where drawing goes; standard error by default.
    ///   - columns: the terminal's width; asked of standard error by default.
    ///   - delay: how long the operation must last before anything is drawn.
    public init(label: String, delay: Duration = .milliseconds(500), columns: Int? = nil,
                write: @escaping @Sendable (String) -> Void = ProgressBar.writeToStandardError) {
        let renderer = Renderer(label: label, delay: delay, columns: columns ?? Self.terminalColumns(fd: 2),
                                write: write)
        self.renderer = renderer
        self.reporter = ProgressReporter { progress in renderer.update(progress) }
    }

    /// Erases the bar if it was drawn. Safe to call more than once.
    public func finish() { renderer.finish() }

    /// The text of the bar for `progress`, fitted to `columns`.
    ///
    /// `Copying  42% [=========>            ]  420 MB of 1 GB`; for many items, by items:
    /// `Importing  60% [====>   ]  12000 of 20000 items, 12 kB / 20 kB`; `Copying  12 items`
    /// while the total size is unknown.
    public static func render(label: String, progress: OperationProgress, columns: Int) -> String {
        // Many small items (a folder of small files): counted by items, whose bytes say little
        // (``OperationProgress/measure``, as every front end counts).
        let byItems = progress.measure == .items
        guard let fraction = progress.fraction else {
            let items = progress.completedItems
            return "\(label)  \(items) \(items == 1 ? "item" : "items")"
        }
        let percent = Int((fraction * 100).rounded(.down))
        let head = "\(label) \(String(repeating: " ", count: max(0, 3 - String(percent).count)))\(percent)% "
        let bytes = "\(Formatting.size(progress.completedBytes)) / \(Formatting.size(progress.totalBytes))"
        let tail = byItems ? "  \(progress.completedItems) of \(progress.totalItems) items, \(bytes)" : "  " + bytes
        let room = columns - 1 - Formatting.width(head) - Formatting.width(tail) - 2
        guard room >= 10 else { return head + tail }
        let width = min(room, 40)
        let filled = Int((fraction * Double(width)).rounded(.down))
        var bar = String(repeating: "=", count: filled)
        if filled < width { bar += ">" + String(repeating: " ", count: width - filled - 1) }
        return "\(head)[\(bar)]\(tail)"
    }

    /// Writes to descriptor 2 directly, so a bar appears even while other output is buffered.
    public static let writeToStandardError: @Sendable (String) -> Void = { text in
        TextOutput.writeAll(Array(text.utf8), to: 2)
    }

    /// The width of the terminal on `fd`, or 80 when it is not one.
    static func terminalColumns(fd: Int32) -> Int {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    private final class Renderer: Sendable {
        private struct State {
            var pace = ProgressPace()
            var drawn = false
            var finished = false
        }

        let label: String
        let delay: Duration
        let columns: Int
        let write: @Sendable (String) -> Void
        let started = ContinuousClock.now
        private let state = Mutex(State())

        init(label: String, delay: Duration, columns: Int, write: @escaping @Sendable (String) -> Void) {
            self.label = label
            self.delay = delay
            self.columns = columns
            self.write = write
        }

        func update(_ progress: OperationProgress) {
            let now = ContinuousClock.now
            guard now - started >= delay else { return }
            state.withLock { state in
                guard !state.finished else { return }
                guard state.pace.admits(at: now) else { return }
                state.drawn = true
                write("\r" + ProgressBar.render(label: label, progress: progress, columns: columns) + "\u{1B}[K")
            }
        }

        func finish() {
            state.withLock { state in
                guard !state.finished else { return }
                state.finished = true
                if state.drawn { write("\r\u{1B}[K") }
            }
        }
    }
}
