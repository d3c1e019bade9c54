import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Commands read from standard input when it is not a terminal (or given with `-c`): no
/// prompt, no echo, no line editing, one command line per line.
///
/// The exit status is 0 only if every command succeeded. Ctrl-C (SIGINT) or SIGTERM
/// cancels the running command through the service — nothing half-done is left — and
/// ends the run with status 130 or 143.
@MainActor
public final class PipedSession {
    public let interpreter: CommandInterpreter
    private let interrupts: [(SignalMonitor, Int32)]
    private let running = RunningCommand()

    public init(interpreter: CommandInterpreter) {
        self.interpreter = interpreter
        self.interrupts = [(SignalMonitor(signal: SIGINT), 130), (SignalMonitor(signal: SIGTERM), 143)]
    }

    /// Runs every line of standard input (or `lines`, for tests) and returns the exit status.
    public func run(lines: (() -> String?)? = nil) async -> Int32 {
        let next = lines ?? { Swift.readLine(strippingNewline: true) }
        for (monitor, status) in interrupts {
            monitor.onSignal { [running] in
                // Waiting for input, there is nothing to undo: stop now.
                if !running.cancel(recording: status) { exit(status) }
            }
        }
        var failed = false
        while let line = next() {
            let outcome = await running.run(line, on: interpreter)
            if let signal = running.signal { return signal }
            switch outcome {
            case .quit: return failed ? 1 : 0
            case .failure: failed = true
            case .success: break
            }
        }
        return failed ? 1 : 0
    }
}
