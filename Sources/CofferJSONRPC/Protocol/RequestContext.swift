public import CofferCore
public import FileService
import Foundation

/// What a method may use while it runs.
public struct RequestContext: Sendable {
    /// The connection's session: operations are performed in it.
    public let session: Session
    public let limits: RPCLimits
    /// Shows progress as the dialect's notifications (`$/progress`) when the request carried
    /// a progress token; `nil` otherwise.
    public let progress: (any ProgressDisplay)?
    /// The server's name and version, for `initialize`.
    public let server: ServerInfo
    /// The methods the connection answers.
    public let methods: RPCMethodRegistry
    /// The conversation's lifecycle, made by its dialect: where a dialect keeps what it
    /// learns of the client (an MCP client's capabilities).
    public let lifecycle: any RPCLifecycle
    /// The hints the front end's messages carry (``RPCServer/Configuration/hints``).
    public var hints: MessageHints = .rpc
    let connection: any MessageConnection
    /// The connection's places for requests that build a large answer.
    let largeAnswers: RequestSlots

    public var service: FileService { session.service }
    /// The most bytes one message carries inline (a read, a write, a thumbnail): the front
    /// end's ``FrontEndDefaults/inlineBytes``.
    public var inlineLimit: Int { session.defaults.inlineBytes }
    /// The session's language, for messages methods build themselves.
    public var language: Language { session.language }

    /// Sends a notification (a message without an id) to the client.
    public func notify<Params: Encodable>(_ method: String, _ params: Params) {
        guard let body = try? JSONEncoder.rpc.encode(NotificationMessage(method: method, params: params)) else { return }
        connection.send(body)
    }

    /// Runs `body`, which builds a large answer (a file's bytes, a thumbnail), in one of the
    /// connection's few places for them (``RPCLimits/maxLargeAnswersInFlight``): many such
    /// requests at once wait their turn instead of each holding its answer in memory, so a
    /// client that asks for a hundred 8 MiB reads costs a few of them at a time.
    public func withLargeAnswer<T>(_ body: () async throws -> T) async throws -> T {
        guard await largeAnswers.acquire() else { throw CofferError(.cancelled) }
        defer { largeAnswers.release() }
        return try await body()
    }

    /// Performs an operation in the session, with the request's progress display.
    public func perform<Operation: FileOperation>(
        _ operation: @autoclosure () throws(CofferError) -> Operation
    ) async throws(CofferError) -> Operation.Output {
        try await session.perform(try operation(), progress: progress)
    }
}

/// What `initialize` reports about the server.
public struct ServerInfo: Sendable, Encodable {
    public var name: String
    public var version: String

    public init(name: String, version: String) { (self.name, self.version) = (name, version) }
}

private struct NotificationMessage<Params: Encodable>: Encodable {
    var jsonrpc = "2.0"
    var method: String
    var params: Params
}
