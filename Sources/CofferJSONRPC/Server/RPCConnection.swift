import CofferCore
import FileService
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
    private let lifecycle: any RPCLifecycle
    private let rules: Envelope.Rules
    private let flow: FlowControl
    private let slots: RequestSlots
    private let ending = Once<Ending>()
    /// What a request answered at once sees: made once, since such requests have no progress.
    private let immediateContext: RequestContext

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
        self.lifecycle = configuration.dialect.makeLifecycle(session: session) { [connection] in connection.send($0) }
        self.rules = Envelope.Rules(configuration.dialect)
        self.immediateContext = Self.context(session: session, configuration: configuration, connection: connection,
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

    private func flushAnswers() async {
        let flushed = Once<Void>()
        connection.flush { flushed.resolve(()) }
        let limit = Task {
            try? await Task.sleep(for: Self.flushLimit)
            flushed.resolve(())
        }
        await flushed.value
        limit.cancel()
    }

    // MARK: Reading

    private func readLoop() -> Ending {
        while true {
            switch connection.receive() {
            case .message(let body):
                if let ended = handle(body) {
                    connection.flushFromReader()
                    return ended
                }
            case .tooLarge(let size):
                respondNow(Self.response(error: RPCError(code: RPCError.invalidRequest, message:
                    "the message of \(size) bytes is larger than maxMessageBytes (\(configuration.limits.maxMessageBytes))"),
                                          id: .null))
            case .malformed(let problem):
                respondNow(Self.response(error: RPCError(code: RPCError.parseError, message: "malformed frame: \(problem)"),
                                          id: .null))
            case .end(let end):
                switch end {
                case .finished: return .finished
                case .hungUp: return .hungUp
                case .truncated:
                    log("the input ended inside a message")
                    return .truncated
                }
            }
        }
    }

    /// Sends an answer made on the reader's thread, within the connection's limits.
    private func respondNow(_ data: Data) {
        flow.admit(data.count)
        connection.sendFromReader(data) { [flow] in flow.release(data.count) }
    }

    /// One message (or batch): lifecycle decided now, work started as tasks. Returns how
    /// the conversation ends when the message ends it.
    private func handle(_ body: Data) -> Ending? {
        // JSONDecoder checks the UTF-8 of the strings it reads, not of those it skips.
        // Most messages are ASCII, checked in place; only the others are decoded to check them.
        let ascii = body.withUnsafeBytes { raw in !raw.contains { $0 >= 0x80 } }
        guard ascii || String(validating: body, as: UTF8.self) != nil else {
            respondNow(Self.response(error: RPCError(code: RPCError.parseError, message: "parse error: the message is not valid UTF-8"),
                                     id: .null))
            return nil
        }
        let shape: StrictJSON.Shape
        do {
            shape = try StrictJSON.scan(body)
        } catch {
            respondNow(Self.response(error: RPCError(code: RPCError.parseError, message: "parse error: \(error.description)"),
                                     id: .null))
            return nil
        }
        switch shape {
        case .single(let message):
            switch prepare(body, message) {
            case .respond(let data): respondNow(data)
            case .run(let work) where work.afterEarlier:
                // Requests read before `shutdown` are answered before it.
                connection.flushFromReader()
                let earlier = session.untilRunningWorkEnds()
                start(work, size: body.count) { await earlier() }
            case .run(let work):
                if !answerImmediately(work) { start(work, size: body.count) }
            case .ignore: break
            case .exit(let id):
                if let id { respondNow(Self.response(result: Data("null".utf8), id: id)) }
                return exitEnding()
            }
            return nil
        case .batch(let messages):
            return handleBatch(body, messages)
        }
    }

    /// A batch: each element is handled as a message of its own, answered together.
    private func handleBatch(_ body: Data, _ messages: [StrictJSON.Message]) -> Ending? {
        guard !messages.isEmpty else {
            respondNow(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "an empty batch"), id: .null))
            return nil
        }
        let steps = messages.map { message -> Step in
            guard message.isObject else {
                return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "a message must be an object"),
                                              id: .null))
            }
            return prepare(body.subdata(in: message.range), message.relative(to: message.range.lowerBound))
        }
        let work = steps.compactMap { step -> Work? in if case .run(let work) = step { work } else { nil } }
        let immediate = steps.compactMap { step -> Data? in
            switch step {
            case .respond(let data): data
            case .exit(let id?): Self.response(result: Data("null".utf8), id: id)
            default: nil
            }
        }
        flow.admit(body.count)
        session.start { [self] in
            var responses = immediate
            let admitted = await slots.acquire()
            await withTaskGroup(of: Data?.self) { group in
                for item in work {
                    group.addTask { admitted ? await self.execute(item) : self.cancelled(item) }
                }
                for await response in group { if let response { responses.append(response) } }
            }
            if admitted { slots.release() }
            finish(responses.isEmpty ? nil : Self.array(responses), chargedFor: body.count)
        }
        return steps.contains { if case .exit = $0 { true } else { false } } ? exitEnding() : nil
    }

    private func exitEnding() -> Ending {
        .exit(afterShutdown: lifecycle.endedCleanly)
    }

    /// Starts a request as a task of the session, cancellable by its id; it runs once it
    /// has a place among the connection's running requests.
    private func start(_ work: Work, size: Int, after earlier: (@Sendable () async -> Void)? = nil) {
        flow.admit(size)
        session.start(work.id.key.map(Self.activityKey)) { [self] in
            await earlier?()
            guard await slots.acquire() else {
                finish(cancelled(work), chargedFor: size)
                return
            }
            let response = await execute(work)
            slots.release()
            finish(response, chargedFor: size)
        }
    }

    /// The answer to a request cancelled before it ran (none where the dialect sends none).
    private func cancelled(_ work: Work) -> Data? {
        guard configuration.dialect.answersCancelledRequests else { return nil }
        return Self.response(error: RPCError.failure(CofferError(.cancelled), language: session.language), id: work.id)
    }

    /// Sends an answer (if any) and frees the request's place once it is written.
    private func finish(_ response: Data?, chargedFor size: Int) {
        guard let response else {
            flow.release(size)
            return
        }
        flow.add(response.count)
        connection.send(response) { [flow] in flow.release(size + response.count) }
    }

    static func activityKey(_ key: RequestKey) -> ActivityKey {
        switch key {
        case .integer(let value): ActivityKey("i\(value)")
        case .number(let literal): ActivityKey("n\(literal)")
        case .string(let text): ActivityKey("s\(text)")
        }
    }

    /// A request ready to run: its method, and the bytes of its params.
    struct Work: Sendable {
        var id: RequestID
        var method: any RPCMethod.Type
        /// The same method when it may be answered on the reader's thread.
        var immediate: (any ImmediateRPCMethod.Type)? = nil
        var answering: (any ImmediateAnswering.Type)? = nil
        var params: Data?
        var token: ProgressToken?
        /// Run once every request read before it is answered.
        var afterEarlier = false
    }

    private enum Step {
        case respond(Data)
        case run(Work)
        case ignore
        /// `exit`, answered with `null` first when it came with an id.
        case exit(RequestID?)
    }

    private struct Refusal: Error { var answer: Data }

    /// A message's envelope: read straight from the bytes for the usual request, else decoded.
    private static func envelope(of body: Data, _ message: StrictJSON.Message, rules: Envelope.Rules) -> Result<Envelope, Refusal> {
        if let quick = Envelope(quick: body, message, rules: rules) { return .success(quick) }
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[Envelope.rulesKey] = rules
            if let range = message.id, let first = body[body.startIndex + range.lowerBound] as UInt8?,
               first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) {
                let start = body.startIndex
                decoder.userInfo[Envelope.idLiteral] =
                    String(decoding: body[(start + range.lowerBound)..<(start + range.upperBound)], as: UTF8.self)
            }
            return .success(try decoder.decode(Envelope.self, from: body))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            let reason = (context.underlyingError.map(Self.describe)) ?? "the message is not valid JSON"
            return .failure(Refusal(answer: Self.response(error: RPCError(code: RPCError.parseError, message: "parse error: \(reason)"), id: .null)))
        } catch {
            return .failure(Refusal(answer: Self.response(error: RPCError(code: RPCError.invalidRequest, message: "a message must be an object"), id: .null)))
        }
    }

    private func prepare(_ body: Data, _ message: StrictJSON.Message) -> Step {
        guard message.isObject else {
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "a message must be an object"),
                                          id: .null))
        }
        let envelope: Envelope
        switch Self.envelope(of: body, message, rules: rules) {
        case .success(let read): envelope = read
        case .failure(let refusal): return .respond(refusal.answer)
        }
        let id: RequestID
        switch envelope.id {
        case .invalid:
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "“id” must be a string or a number"), id: .null))
        case .absent:
            // Without an id a valid message is a notification, never answered; an invalid one
            // is answered with an error for the id `null`, as JSON-RPC 2.0 asks.
            guard envelope.jsonrpc == "2.0" else {
                return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "“jsonrpc” must be \"2.0\""),
                                              id: .null))
            }
            guard let name = envelope.method else {
                let problem = envelope.hasMethod ? "“method” must be a string" : "a message needs a “method”"
                return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: problem), id: .null))
            }
            return notification(name, envelope)
        case .valid(let valid):
            id = valid
        }
        if envelope.isResponse, !envelope.hasMethod, lifecycle.receivedResponse(body) { return .ignore }
        guard envelope.jsonrpc == "2.0" else {
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "“jsonrpc” must be \"2.0\""), id: id))
        }
        guard let name = envelope.method else {
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "“method” must be a string"), id: id))
        }
        if lifecycle.ends(name) { return .exit(id) }
        if envelope.params == .notObject {
            return .respond(Self.response(error: .invalidParams("params must be an object (by name)"), id: id))
        }
        let afterEarlier: Bool
        switch lifecycle.request(name, locale: envelope.locale, session: session) {
        case .proceed: afterEarlier = false
        case .proceedAfterEarlier: afterEarlier = true
        case .refuse(let refusal): return .respond(Self.response(error: refusal, id: id))
        case .exit: return .exit(id)
        }
        guard let entry = configuration.methods.entry(named: name) else {
            return .respond(Self.response(error: RPCError(code: RPCError.methodNotFound, message: "no method “\(name)”"), id: id))
        }
        let params = message.params.map { body.subdata(in: (body.startIndex + $0.lowerBound)..<(body.startIndex + $0.upperBound)) }
        return .run(Work(id: id, method: entry.method, immediate: entry.immediate, answering: entry.answering, params: params,
                         token: envelope.progressToken, afterEarlier: afterEarlier))
    }

    private func notification(_ name: String, _ envelope: Envelope) -> Step {
        if name == rules.cancelMethod {
            if let key = envelope.cancelID?.key { session.cancel(Self.activityKey(key)) }
            return .ignore
        }
        if lifecycle.ends(name) { return .exit(nil) }
        switch lifecycle.notification(name) {
        case .exit: return .exit(nil)
        case .proceed, .proceedAfterEarlier, .refuse: return .ignore
        }
    }

    // MARK: Running

    /// Answers a request on the reader's thread when its method can be answered at once
    /// (``ImmediateRPCMethod``) and is; `false` to run it as a task instead. Nothing waits
    /// here for long: the method only reads metadata from storage that answers without
    /// waiting, so the next request is read a few microseconds later, and a slow request
    /// is never among these.
    private func answerImmediately(_ work: Work) -> Bool {
        guard let method = work.immediate else { return false }
        let response: Data
        do {
            let answer = try work.answering.map {
                try $0.answerImmediately(params: work.params, id: work.id, context: immediateContext)
            } ?? invokeImmediately(method, params: work.params, id: work.id, context: immediateContext)
            guard let answer else { return false }
            response = answer
        } catch {
            response = Self.response(error: rpcError(error), id: work.id)
        }
        respondNow(response)
        return true
    }

    private func context(progress: (any ProgressDisplay)?) -> RequestContext {
        guard let progress else { return immediateContext }
        return Self.context(session: session, configuration: configuration, connection: connection, lifecycle: lifecycle,
                            progress: progress)
    }

    private static func context(session: Session, configuration: RPCServer.Configuration, connection: any MessageConnection,
                                lifecycle: any RPCLifecycle, progress: (any ProgressDisplay)?) -> RequestContext {
        RequestContext(session: session, limits: configuration.limits, progress: progress,
                       server: ServerInfo(name: configuration.serverName, version: configuration.version),
                       methods: configuration.methods, lifecycle: lifecycle, connection: connection)
    }

    private func execute(_ work: Work) async -> Data? {
        let progress = work.token.map { [connection] token in
            configuration.dialect.progressDisplay(token: token, method: work.method.name) { connection.send($0) }
        }
        let context = context(progress: progress)
        do {
            return try await invoke(work.method, params: work.params, id: work.id, context: context)
        } catch {
            let failure = rpcError(error)
            if failure.code == RPCError.requestCancelled, !configuration.dialect.answersCancelledRequests { return nil }
            return Self.response(error: failure, id: work.id)
        }
    }

    /// The response to a request of `method`.
    private func invoke<M: RPCMethod>(_ method: M.Type, params: Data?, id: RequestID, context: RequestContext) async throws -> Data {
        try Self.response(encoding: try await M.run(try Self.params(of: M.self, from: params), context), id: id)
    }

    private func invokeImmediately<M: ImmediateRPCMethod>(_ method: M.Type, params: Data?, id: RequestID,
                                                          context: RequestContext) throws -> Data? {
        guard let result = try M.runImmediately(try Self.params(of: M.self, from: params), context) else { return nil }
        return try Self.response(encoding: result, id: id)
    }

    /// A method's params, decoded from the bytes of the message's `params` object alone (an
    /// absent or `null` one is an empty object).
    static func params<M: RPCMethod>(of method: M.Type, from params: Data?) throws -> M.Params {
        let object = params.flatMap { $0.first == UInt8(ascii: "n") ? nil : $0 } ?? Data("{}".utf8)
        if let flat = FlatParams.decode(M.Params.self, from: object) { return flat }
        do {
            return try JSONDecoder().decode(M.Params.self, from: object)
        } catch let error as DecodingError {
            throw RPCError.from(error)
        }
    }

    private func rpcError(_ error: any Error) -> RPCError {
        switch error {
        case let error as RPCError: return error
        case let error as DecodingError: return RPCError.from(error)
        case let error as CofferError: return RPCError.failure(error, language: session.language)
        case is CancellationError: return RPCError.failure(CofferError(.cancelled), language: session.language)
        default:
            log("internal error: \(error)")
            return RPCError(code: RPCError.internalError, message: "internal error")
        }
    }

    // MARK: Writing

    /// The response carrying `value` as its result: written in one buffer, envelope and
    /// all, when the result writes its own JSON.
    static func response<Value: Encodable>(encoding value: Value, id: RequestID) throws -> Data {
        guard let writable = value as? any JSONWritable else { return response(result: try JSONEncoder.rpc.encode(value), id: id) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(384)
        bytes.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.writeJSON(into: &bytes)
        bytes.append(contentsOf: #","result":"#.utf8)
        writable.writeJSON(into: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    static func response(result: Data, id: RequestID) -> Data {
        let head = #"{"jsonrpc":"2.0","id":"#
        let middle = #","result":"#
        let identifier = id.json
        var data = Data(capacity: head.utf8.count + identifier.count + middle.utf8.count + result.count + 2)
        data.append(contentsOf: head.utf8)
        data.append(identifier)
        data.append(contentsOf: middle.utf8)
        data.append(result)
        data.append(UInt8(ascii: "}"))
        return data
    }

    static func response(error: RPCError, id: RequestID) -> Data {
        var object: [String: Any] = ["code": error.code, "message": error.message]
        if let data = error.data { object["data"] = data }
        var data = Data(#"{"jsonrpc":"2.0","id":"#.utf8)
        data.append(id.json)
        data.append(contentsOf: Array(#","error":"#.utf8))
        data.append(jsonData(object))
        data.append(UInt8(ascii: "}"))
        return data
    }

    static func array(_ items: [Data]) -> Data {
        var data = Data([UInt8(ascii: "[")])
        for (index, item) in items.enumerated() {
            if index > 0 { data.append(UInt8(ascii: ",")) }
            data.append(item)
        }
        data.append(UInt8(ascii: "]"))
        return data
    }

    static func jsonData(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed, .withoutEscapingSlashes]))
            ?? Data("null".utf8)
    }

    private static func describe(_ error: any Error) -> String {
        let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        return text ?? "the message is not valid JSON"
    }

    func log(_ text: String) {
        FileHandle.standardError.write(Data("\(configuration.serverName) \(configuration.frontEnd): \(text)\n".utf8))
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
