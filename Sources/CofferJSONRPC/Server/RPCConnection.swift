public import CofferCore
public import FileService
import Foundation
import Synchronization

/// One client's JSON-RPC 2.0 conversation (the contract is `RPC.md`; users read
/// `Documentation/RPC.md`), over any ``MessageConnection``, in a ``Session`` of its own,
/// in the configuration's ``RPCDialect`` (LSP's for `coffer rpc`, MCP's for `coffer mcp`).
///
/// A reader thread takes frames off the connection and decides, in arrival order, what
/// each message means for the dialect's lifecycle (`initialize`, `shutdown`, `exit`); the work of
/// each request then runs as a task of the session, so a slow copy never holds up a
/// `files/stat`, and answers go out as they finish, possibly out of order.
/// The dialect's cancelling notification (`$/cancelRequest`) cancels a request's task, which
/// the service turns into a clean stop (`-32800`, nothing half-done). The connection's language, watches, uploads and
/// cancellations are its session's, so clients sharing a server never see each other's.
///
/// How it ends: after `exit`, or when the peer hangs up, what is running is cancelled; at a
/// plain end of input the requests already read are finished and answered. Either way the
/// session is closed — its watches stopped, its unfinished uploads discarded.
public final class RPCConnection: Sendable {
    /// How a conversation ended.
    public enum Ending: Sendable, Equatable {
        /// `exit`, after `shutdown` or not.
        case exit(afterShutdown: Bool)
        /// The input ended between messages.
        case finished
        /// The input ended inside a message.
        case truncated
        /// The peer went away.
        case hungUp
        /// ``stop()`` was called (the server is stopping).
        case stopped
    }

    public let session: Session
    let connection: any MessageConnection
    let configuration: RPCServer.Configuration
    let lifecycle: any RPCLifecycle
    let rules: Envelope.Rules
    let flow: FlowControl
    let slots: RequestSlots
    /// The places for requests that build a large answer (``RequestContext/withLargeAnswer(_:)``).
    let largeAnswers: RequestSlots
    let ending = Once<Ending>()
    /// What a request answered at once sees: made once, since such requests have no progress.
    let immediateContext: RequestContext

    /// A conversation over `connection`, in a new long-lived session of `service` with the
    /// configuration's language and host access.
    /// - Throws: when the configuration's host folders cannot be used.
    public init(service: FileService, connection: any MessageConnection,
                configuration: RPCServer.Configuration) throws(CofferError) {
        self.session = try service.openSession(SessionOptions(
            frontEnd: configuration.frontEnd, language: configuration.language, hostAccess: configuration.hostAccess, isLongLived: true))
        self.connection = connection
        self.configuration = configuration
        self.flow = FlowControl(maxRequests: configuration.limits.maxQueuedRequests,
                                maxBytes: configuration.limits.maxPendingBytes)
        self.slots = RequestSlots(configuration.limits.maxRequestsInFlight)
        self.largeAnswers = RequestSlots(configuration.limits.maxLargeAnswersInFlight)
        self.lifecycle = configuration.dialect.makeLifecycle(session: session) { [connection] in connection.send($0) }
        self.rules = Envelope.Rules(configuration.dialect)
        self.immediateContext = Self.context(session: session, configuration: configuration, connection: connection,
                                             largeAnswers: largeAnswers,
                                             lifecycle: lifecycle, progress: nil)
    }

    /// Serves until the conversation ends, then closes the session and returns how it ended.
    public func serve() async -> Ending {
        // Nobody is left to answer: stop what runs, and what would start.
        connection.onHangUp { [session] in session.stopWork() }
        let thread = Thread { [self] in ending.resolve(readLoop()) }
        thread.name = "coffer.rpc.reader"
        thread.stackSize = 4 << 20
        thread.start()
        let ended = await ending.value
        // No answer can arrive any more: questions still waiting get none (their operations cancel).
        lifecycle.questions?.endAll()
        switch ended {
        case .exit, .hungUp, .stopped: session.stopWork()
        case .finished, .truncated: break
        }
        await session.waitForAllWork()
        await session.close()
        await flushAnswers()
        connection.close()
        return ended
    }

    /// Ends the conversation from outside — a signal, a server going down: no more requests
    /// are read, running ones are cancelled (nothing half-done is left) and answered as
    /// such, and ``serve()`` returns ``Ending/stopped``.
    public func stop() {
        ending.resolve(.stopped)
        connection.stopReceiving()
    }

    /// How long the last answers may take to go out before the connection is closed anyway
    /// (a client that stopped reading must not keep a server from stopping).
    static let flushLimit: Duration = .seconds(5)

    func flushAnswers() async {
        let flushed = Once<Void>()
        connection.flush { flushed.resolve(()) }
        let limit = Task {
            try? await Task.sleep(for: Self.flushLimit)
            flushed.resolve(())
        }
        await flushed.value
        limit.cancel()
    }
}

/// A value set once, by whichever comes first, and awaited.
final class Once<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))

    /// Sets the value unless it is set already.
    func resolve(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Value? in
                    if let value = state.value { return value }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
