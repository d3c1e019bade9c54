import CofferCore
public import FileService
public import Foundation
import Synchronization

/// What a protocol spoken over JSON-RPC 2.0 decides beyond JSON-RPC itself: its lifecycle
/// (which messages start, end or are refused), the notification that cancels a request,
/// where a request asks for progress and how progress is sent.
///
/// ``RPCConnection`` owns everything else — framing, flow control, running requests as
/// tasks of a session, answering out of order, ending cleanly — so a front end that speaks
/// another protocol over the same transports (MCP) brings a dialect and its methods, and
/// nothing more. `coffer rpc` speaks ``LanguageServerDialect``.
public protocol RPCDialect: Sendable {
    /// The notification that cancels a request, and the param that names it
    /// (`$/cancelRequest` with `id`; MCP's `notifications/cancelled` with `requestId`).
    var cancelNotification: (method: String, idParam: String) { get }

    /// Where a request asks for progress reports.
    var progressTokenPlace: ProgressTokenPlace { get }

    /// Whether a request the client cancelled is still answered (LSP: yes, with `-32800`;
    /// MCP: no, the client has forgotten it).
    var answersCancelledRequests: Bool { get }

    /// A new lifecycle, for one conversation in `session`; `send` writes a message of the
    /// server's own to the client (a request the dialect makes, say).
    func makeLifecycle(session: Session, send: @escaping @Sendable (Data) -> Void) -> any RPCLifecycle

    /// Progress reports for a request that asked for them with `token`; `send` writes one
    /// notification.
    func progressDisplay(token: ProgressToken, method: String,
                         send: @escaping @Sendable (Data) -> Void) -> any ProgressDisplay
}

/// Where in its params a request carries its progress token.
public enum ProgressTokenPlace: Sendable {
    /// A param of its own (LSP's `workDoneToken`).
    case param(String)
    /// `_meta.progressToken` (MCP).
    case meta
}

/// One conversation's lifecycle, asked in arrival order, on the thread that reads.
public protocol RPCLifecycle: Sendable {
    /// Whether a message for `method`, request or notification, ends the conversation
    /// whatever else it holds (LSP's `exit`).
    func ends(_ method: String) -> Bool
    /// What becomes of a request (a message with an id) for `method`. `locale` is the one
    /// an LSP `initialize` names.
    func request(_ method: String, locale: String?, session: Session) -> LifecycleDecision
    /// What becomes of a notification for `method` other than the cancelling one.
    func notification(_ method: String) -> LifecycleDecision
    /// Whether the conversation had been shut down when it ended (an `exit` after `shutdown`).
    var endedCleanly: Bool { get }
    /// A response from the client to a request the server sent (the whole message); `false`
    /// when the dialect sends no requests, and the message is refused as one without a method.
    func receivedResponse(_ message: Data) -> Bool
    /// Where the server's questions to the client go (``ClientQuestions``); `nil` when the
    /// dialect asks none.
    var questions: ClientQuestions? { get }
}

extension RPCLifecycle {
    public func receivedResponse(_ message: Data) -> Bool { false }
    public var questions: ClientQuestions? { nil }
}

public enum LifecycleDecision: Sendable {
    /// Run the request (a notification: nothing more to do).
    case proceed
    /// Run it once every request read before it has been answered (LSP's `shutdown`).
    case proceedAfterEarlier
    /// Answer with this error instead (a notification: ignore it).
    case refuse(RPCError)
    /// End the conversation (answering a request with `null` first).
    case exit
}

/// A progress token: a string or an integer, echoed in every report.
public enum ProgressToken: Decodable, Sendable, Hashable {
    case string(String)
    case integer(Int64)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) { self = .string(text); return }
        self = .integer(try container.decode(Int64.self))
    }

    /// The token as JSONSerialization writes it.
    public var jsonObject: Any {
        switch self {
        case .string(let text): text
        case .integer(let value): NSNumber(value: value)
        }
    }
}

// MARK: LSP

/// The Language Server Protocol's lifecycle, as `coffer rpc` speaks it (`RPC.md`):
/// `initialize` first (naming the session's locale), `shutdown` answered after everything
/// read before it, then only `exit`; `$/cancelRequest` and `$/progress` with `workDoneToken`.
public struct LanguageServerDialect: RPCDialect {
    public init() {}

    public var cancelNotification: (method: String, idParam: String) { ("$/cancelRequest", "id") }
    public var progressTokenPlace: ProgressTokenPlace { .param("workDoneToken") }
    public var answersCancelledRequests: Bool { true }

    public func makeLifecycle(session: Session, send: @escaping @Sendable (Data) -> Void) -> any RPCLifecycle {
        Lifecycle(questions: ClientQuestions(send: send))
    }

    public func progressDisplay(token: ProgressToken, method: String,
                                send: @escaping @Sendable (Data) -> Void) -> any ProgressDisplay {
        ProgressNotifier(token: token, title: method, send: send)
    }

    final class Lifecycle: RPCLifecycle {
        enum Phase { case waiting, running, shutDown }
        private let phase = Mutex(Phase.waiting)
        let questions: ClientQuestions?

        init(questions: ClientQuestions?) { self.questions = questions }

        func receivedResponse(_ message: Data) -> Bool { questions?.receive(message) ?? false }

        func ends(_ method: String) -> Bool { method == "exit" }

        func request(_ method: String, locale: String?, session: Session) -> LifecycleDecision {
            phase.withLock { phase -> LifecycleDecision in
                switch (phase, method) {
                case (.waiting, "initialize"):
                    phase = .running
                    if let locale, let language = Language(code: locale) { session.language = language }
                    return .proceed
                case (.waiting, _):
                    return .refuse(RPCError(code: RPCError.notInitialized,
                                            message: "the server is not initialized: send “initialize” first"))
                case (.running, "initialize"):
                    return .refuse(RPCError(code: RPCError.invalidRequest, message: "the server is already initialized"))
                case (.running, "shutdown"):
                    phase = .shutDown
                    return .proceedAfterEarlier
                case (.running, _):
                    return .proceed
                case (.shutDown, _):
                    return .refuse(RPCError(code: RPCError.invalidRequest,
                                            message: "the server is shutting down; only “exit” is accepted"))
                }
            }
        }

        func notification(_ method: String) -> LifecycleDecision {
            // `initialized` and anything unknown: notifications get no answer.
            .proceed
        }

        var endedCleanly: Bool { phase.withLock { $0 == .shutDown } }
    }
}
