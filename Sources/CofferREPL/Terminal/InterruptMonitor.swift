import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Receives a signal (SIGINT for Ctrl-C, SIGTERM) as an ordinary call on a queue, instead
/// of letting it end the process, and hands it to whoever is listening now: the line
/// editor at the prompt, or the session while a command runs (which cancels it).
public final class InterruptMonitor: @unchecked Sendable {
    // The dispatch source is created in `init` and only cancelled in `deinit`.
    private let source: any DispatchSourceSignal
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    private let number: Int32
    private let previous: sighandler_t?

    /// Starts catching `signal`. Its default action (ending the process) is turned off
    /// for as long as the monitor lives.
    public init(signal number: Int32 = SIGINT) {
        self.number = number
        previous = signal(number, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: number, queue: .global(qos: .userInteractive))
        source.setEventHandler { [weak self] in
            let body = self?.handler.withLock { $0 }
            body?()
        }
        source.resume()
    }

    /// Calls `body` on each signal from now on (or nothing, for `nil`).
    public func onSignal(_ body: (@Sendable () -> Void)?) {
        handler.withLock { $0 = body }
    }

    /// Puts the signal's previous disposition back.
    deinit {
        source.cancel()
        signal(number, previous ?? SIG_DFL)
    }
}
