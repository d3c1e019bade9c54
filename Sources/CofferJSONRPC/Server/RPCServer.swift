public import CofferCore
import CofferRuntime
public import FileService
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `coffer rpc`: the JSON-RPC 2.0 server, on standard input and output or on a Unix-domain
/// socket that many clients use at once. Each client is an ``RPCConnection`` with a session
/// of its own; this type only sets them up and takes them down.
public enum RPCServer {
    public struct Configuration: Sendable {
        /// Forced framing; `nil` detects it from the first byte.
        public var framing: Framing?
        public var limits = RPCLimits()
        /// The language before `initialize` names one.
        public var language: Language
        public var version: String
        /// The name `initialize` reports (`coffer`, or an application built on it).
        public var serverName = "coffer"
        /// The host folders clients may import from and export to.
        public var hostAccess = HostAccess.nowhere
        /// The methods answered: Coffer's own, plus an application's.
        public var methods = RPCMethodRegistry.standard
        /// The protocol spoken over JSON-RPC: LSP's lifecycle, or another front end's.
        public var dialect: any RPCDialect = LanguageServerDialect()
        /// The front end's name in the audit log and in what it logs (`rpc`, `mcp`).
        public var frontEnd = "rpc"
        /// The hints its errors carry, naming its own methods and options (`.rpc` names
        /// `coffer rpc`'s; the web page, whose users see no method, gives Core's alone).
        public var hints = MessageHints.rpc

        public init(framing: Framing? = nil, language: Language, version: String) {
            self.framing = framing
            self.language = language
            self.version = version
        }
    }

    /// Serves one client on standard input and output until it is done, and returns the exit
    /// status: 0 after a clean end of input, `exit` after `shutdown`, or SIGTERM/SIGINT
    /// (running requests cancelled cleanly); 1 for `exit` without `shutdown` or input that
    /// ended inside a message.
    public static func serveStandardIO(_ service: FileService, configuration: Configuration) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let connection: RPCConnection
        do {
            connection = try RPCConnection(service: service, connection: StreamConnection.standardIO(
                framing: configuration.framing, maxMessageBytes: configuration.limits.maxMessageBytes,
                maxUnsentBytes: configuration.limits.maxPendingBytes),
                                           configuration: configuration)
        } catch {
            FileHandle.standardError.write(Data("\(configuration.serverName): \(error.userMessage(in: configuration.language))\n".utf8))
            return 1
        }
        let stops = StopSignals()
        stops.onStop { connection.stop() }
        let ending = await connection.serve()
        stops.disarm()
        switch ending {
        case .exit(let afterShutdown): return afterShutdown ? 0 : 1
        case .finished, .hungUp, .stopped: return 0
        case .truncated: return 1
        }
    }

    /// Accepts clients on `listener` until SIGTERM or SIGINT, each in a session of its own,
    /// then cancels what they are running (nothing half-done is left), closes every
    /// connection, removes the socket, and returns 0.
    /// - Parameter stops: the signals, caught since before the socket was made (a signal that
    ///   came in between stops the server as soon as it starts, instead of killing the
    ///   process and leaving the socket behind).
    public static func serve(_ service: FileService, on listener: UnixSocketListener, configuration: Configuration,
                             stops: StopSignals = StopSignals()) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        // One index kept live for every client, not rebuilt between them.
        service.retainBackgroundWork()
        let clients = RPCClients()
        let stopped = Once<Void>()
        stops.onStop { stopped.resolve(()) }
        let acceptor = Thread {
            while let fd = listener.accept() {
                let stream = StreamConnection.socket(fd, framing: configuration.framing,
                                                     maxMessageBytes: configuration.limits.maxMessageBytes,
                                                     maxUnsentBytes: configuration.limits.maxPendingBytes)
                guard let client = try? RPCConnection(service: service, connection: stream, configuration: configuration)
                else { continue }
                clients.serve(client)
            }
        }
        acceptor.name = "coffer.rpc.accept"
        acceptor.start()
        await stopped.value
        stops.disarm()
        listener.close()
        await clients.stopAll()
        await service.releaseBackgroundWork()
        return 0
    }
}

/// The connections a listening server is serving (a Unix socket's, a web server's WebSockets).
public final class RPCClients: Sendable {
    private struct State {
        var next = 0
        var running: [Int: (connection: RPCConnection, task: Task<Void, Never>)] = [:]
        var stopping = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Serves a new connection; one that arrives while the server stops is stopped at once
    /// (its session is still opened and closed properly).
    public func serve(_ connection: RPCConnection) {
        let stopping = state.withLock { clients in
            let number = clients.next
            clients.next += 1
            // `finished` takes the lock, so the entry is in place before the task can end.
            let task = Task { [self] in
                _ = await connection.serve()
                finished(number)
            }
            clients.running[number] = (connection, task)
            return clients.stopping
        }
        if stopping { connection.stop() }
    }

    private func finished(_ number: Int) {
        _ = state.withLock { $0.running.removeValue(forKey: number) }
    }

    /// Stops every connection, and those that arrive meanwhile, and waits until each has
    /// closed its session.
    public func stopAll() async {
        while true {
            let running = state.withLock { clients in
                clients.stopping = true
                return Array(clients.running.values)
            }
            if running.isEmpty { return }
            for client in running { client.connection.stop() }
            for client in running { await client.task.value }
        }
    }
}

/// SIGTERM and SIGINT, caught from the moment this is made and turned into a clean stop
/// once ``onStop(_:)`` says how; a signal that came before is not lost.
public final class StopSignals: Sendable {
    private let monitors: [SignalMonitor]
    private final class State: Sendable {
        let value = Mutex<(signalled: Bool, stop: (@Sendable () -> Void)?)>((false, nil))
    }
    private let state = State()

    public init() {
        let state = state
        // Each monitor listens from its first moment: a SIGTERM sent while the second one is
        // made is kept, not dropped.
        let signalled: @Sendable () -> Void = {
            let stop = state.value.withLock { state in
                state.signalled = true
                return state.stop
            }
            stop?()
        }
        monitors = [SignalMonitor(signal: SIGTERM, onSignal: signalled), SignalMonitor(signal: SIGINT, onSignal: signalled)]
    }

    /// Stops with `stop` on the next signal, or now if one has come.
    func onStop(_ stop: @escaping @Sendable () -> Void) {
        let signalled = state.value.withLock { state in
            state.stop = stop
            return state.signalled
        }
        if signalled { stop() }
    }

    /// Returns at the first signal, or at once if one has come.
    public func wait() async {
        let stopped = Once<Void>()
        onStop { stopped.resolve(()) }
        await stopped.value
    }

    /// Stops catching: a signal after this does what it would without a handler.
    public func disarm() {
        for monitor in monitors { monitor.onSignal(nil) }
    }
}
