import Dispatch
import Synchronization
#if canImport(Glibc)
public import Glibc
#endif

/// Receives a signal (SIGINT for Ctrl-C, SIGTERM) as an ordinary call on a queue, instead
/// of letting it end the process, and hands it to whoever is listening now: the REPL's line
/// editor at the prompt or the command it runs, a JSON-RPC server that stops cleanly.
public final class SignalMonitor: @unchecked Sendable {
    // The dispatch source is created in `init` and only cancelled in `deinit`.
    private let source: any DispatchSourceSignal
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    private let number: Int32

    /// Starts catching `signal`. Its default action (ending the process) is turned off
    /// for as long as a monitor of that signal lives.
    ///
    /// Dispatch installs its own handler on a thread of its own, after `resume`; until then
    /// the signal is ignored. `init` returns only once that is done (or after a few seconds
    /// at most): a server that began serving before it lost a SIGTERM sent just as it started,
    /// and kept running. `body`, when given, is listening before the first signal can come.
    public init(signal number: Int32 = SIGINT, onSignal body: (@Sendable () -> Void)? = nil) {
        self.number = number
        handler.withLock { $0 = body }
        Self.retainIgnored(number)
        source = DispatchSource.makeSignalSource(signal: number, queue: .global(qos: .userInteractive))
        source.setEventHandler { [weak self] in
            let body = self?.handler.withLock { $0 }
            body?()
        }
        let registered = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.resume()
        _ = registered.wait(timeout: .now() + .seconds(5))
    }

    /// Calls `body` on each signal from now on (or nothing, for `nil`).
    public func onSignal(_ body: (@Sendable () -> Void)?) {
        handler.withLock { $0 = body }
    }

    /// Puts the signal's previous disposition back once no monitor of it is left.
    deinit {
        source.cancel()
        Self.releaseIgnored(number)
    }

    /// Per signal: how many monitors need it ignored, and what to restore after the last.
    private static let ignored = Mutex<[Int32: (count: Int, previous: sighandler_t?)]>([:])

    private static func retainIgnored(_ number: Int32) {
        ignored.withLock { table in
            if let entry = table[number] {
                table[number] = (entry.count + 1, entry.previous)
            } else {
                table[number] = (1, signal(number, SIG_IGN))
            }
        }
    }

    private static func releaseIgnored(_ number: Int32) {
        ignored.withLock { table in
            guard let entry = table[number] else { return }
            if entry.count > 1 {
                table[number] = (entry.count - 1, entry.previous)
            } else {
                table[number] = nil
                signal(number, entry.previous ?? SIG_DFL)
            }
        }
    }
}
