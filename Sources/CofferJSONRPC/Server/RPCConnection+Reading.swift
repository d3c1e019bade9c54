import CofferCore
import FileService
import Foundation
import Synchronization

/// Reading: frames off the connection, each message decided in arrival order.
extension RPCConnection {

    func readLoop() -> Ending {
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
    func respondNow(_ data: Data) {
        flow.admit(data.count)
        connection.sendFromReader(data) { [flow] in flow.release(data.count) }
    }

    /// One message (or batch): lifecycle decided now, work started as tasks. Returns how
    /// the conversation ends when the message ends it.
    func handle(_ body: Data) -> Ending? {
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
    func handleBatch(_ body: Data, _ messages: [StrictJSON.Message]) -> Ending? {
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

    func exitEnding() -> Ending {
        .exit(afterShutdown: lifecycle.endedCleanly)
    }

    /// Starts a request as a task of the session, cancellable by its id; it runs once it
    /// has a place among the connection's running requests.
    func start(_ work: Work, size: Int, after earlier: (@Sendable () async -> Void)? = nil) {
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
    func cancelled(_ work: Work) -> Data? {
        guard configuration.dialect.answersCancelledRequests else { return nil }
        return Self.response(error: RPCError.failure(CofferError(.cancelled), language: session.language, hints: configuration.hints), id: work.id)
    }

    /// Sends an answer (if any) and frees the request's place once it is written.
    func finish(_ response: Data?, chargedFor size: Int) {
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

    enum Step {
        case respond(Data)
        case run(Work)
        case ignore
        /// `exit`, answered with `null` first when it came with an id.
        case exit(RequestID?)
    }

    struct Refusal: Error { var answer: Data }

    /// A message's envelope: read straight from the bytes for the usual request, else decoded.
    static func envelope(of body: Data, _ message: StrictJSON.Message, rules: Envelope.Rules) -> Result<Envelope, Refusal> {
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

    func prepare(_ body: Data, _ message: StrictJSON.Message) -> Step {
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

    func notification(_ name: String, _ envelope: Envelope) -> Step {
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
}
