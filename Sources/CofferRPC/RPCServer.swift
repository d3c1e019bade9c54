import CofferCore
import FileService
import Foundation
import Synchronization

/// The JSON-RPC 2.0 server behind `coffer rpc` (the contract is `RPC.md`; users read
/// `Documentation/RPC.md`).
///
/// A reader thread takes frames off standard input and decides, in arrival order, what
/// each message means for the session's lifecycle; the work of each request then runs as
/// its own task, so a slow copy never holds up a `files/stat`, and responses go out as they
/// finish, possibly out of order. `$/cancelRequest` cancels a request's task, which the
/// service turns into a clean stop (`-32800`, nothing half-done). At the end of input the
/// requests already read are finished and answered; after `exit` they are cancelled.
/// Either way unfinished uploads are discarded before the process ends.
public final class RPCServer: Sendable {
    public struct Configuration: Sendable {
        /// Forced framing; `nil` detects it from the first byte.
        public var framing: Framing?
        public var limits = RPCLimits()
        /// The language before `initialize` names one.
        public var language: Language
        public var version: String
        /// The name `initialize` reports (`coffer`, or an application built on it).
        public var serverName = "coffer"

        public init(framing: Framing? = nil, language: Language, version: String) {
            self.framing = framing
            self.language = language
            self.version = version
        }
    }

    enum Phase: Sendable { case waiting, running, shutDown }

    struct State: Sendable {
        var phase = Phase.waiting
        var language: Language
    }

    let service: FileService
    let configuration: Configuration
    private let writer: FrameWriter
    private let input: Int32
    private let state: Mutex<State>
    let inFlight = InFlightRequests()
    private let watches: WatchRegistry

    public init(service: FileService, configuration: Configuration, input: Int32 = 0, output: Int32 = 1) {
        self.service = service
        self.configuration = configuration
        self.input = input
        self.writer = FrameWriter(fd: output)
        self.watches = WatchRegistry(writer: writer)
        self.state = Mutex(State(language: configuration.language))
    }

    /// Serves until `exit` or the end of input, then returns the exit status: 0 after a
    /// clean end of input or `exit` after `shutdown`; 1 for `exit` without `shutdown` or
    /// input that ended inside a frame.
    public func run() async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        // Build or catch up the search index in the background, and keep it current.
        let indexing = Task { [service] in await service.startIndexing(watching: true) }
        let sweeper = Task { [service] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(60))
                await service.abortUploads(idleFor: FileService.uploadIdleLimit)
            }
        }
        let ending: Ending = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: self.readLoop()) }
            thread.stackSize = 4 << 20
            thread.start()
        }
        sweeper.cancel()
        // The client has gone: nothing is watched for it any longer.
        watches.closeAll()
        if ending == .exit { inFlight.cancelAll() }
        await inFlight.waitForAll()
        await service.abortUploads(idleFor: nil)
        indexing.cancel()
        service.stopIndexing()
        writer.flush()
        switch ending {
        case .exit: return state.withLock { $0.phase == .shutDown } ? 0 : 1
        case .endOfInput: return 0
        case .truncated: return 1
        }
    }

    enum Ending: Sendable { case exit, endOfInput, truncated }

    // MARK: Reading

    private func readLoop() -> Ending {
        let reader = FrameReader(fd: input, framing: configuration.framing,
                                 maxMessageBytes: configuration.limits.maxMessageBytes)
        while true {
            let frame = reader.next()
            if let framing = reader.framing { writer.use(framing) }
            switch frame {
            case .message(let body):
                if handle(body) == .exit { return .exit }
            case .tooLarge(let size):
                send(error: RPCError(code: RPCError.invalidRequest, message:
                    "the message of \(size) bytes is larger than maxMessageBytes (\(configuration.limits.maxMessageBytes))"),
                     id: .null)
            case .malformed(let problem):
                send(error: RPCError(code: RPCError.parseError, message: "malformed frame: \(problem)"), id: .null)
            case .end(let truncated):
                if truncated { log("the input ended inside a message") }
                return truncated ? .truncated : .endOfInput
            }
        }
    }

    private enum Handling { case continueReading, exit }

    /// One message (or batch): lifecycle decided now, work started as tasks.
    private func handle(_ body: Data) -> Handling {
        // JSONDecoder checks the UTF-8 of the strings it reads, not of those it skips.
        guard String(validating: body, as: UTF8.self) != nil else {
            send(error: RPCError(code: RPCError.parseError, message: "parse error: the message is not valid UTF-8"), id: .null)
            return .continueReading
        }
        let first = body.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
        guard first == UInt8(ascii: "[") else {
            switch prepare(body) {
            case .respond(let data): writer.send(data)
            case .run(let work) where work.method == Shutdown.self:
                // Requests read before `shutdown` are answered before it.
                let earlier = inFlight.running()
                inFlight.start(key: work.id.key) { [self] in
                    for task in earlier { await task.value }
                    if let data = await execute(work) { writer.send(data) }
                }
            case .run(let work):
                inFlight.start(key: work.id.key) { [self] in if let data = await execute(work) { writer.send(data) } }
            case .ignore: break
            case .exit: return .exit
            }
            return .continueReading
        }
        // A batch: each element is handled as a message of its own, answered together.
        let batch: [Any]
        do {
            guard let array = try JSONSerialization.jsonObject(with: body) as? [Any] else { throw CocoaError(.coderReadCorrupt) }
            batch = array
        } catch {
            send(error: RPCError(code: RPCError.parseError, message: "parse error: \(Self.describe(error))"), id: .null)
            return .continueReading
        }
        guard !batch.isEmpty else {
            send(error: RPCError(code: RPCError.invalidRequest, message: "an empty batch"), id: .null)
            return .continueReading
        }
        let steps = batch.map { element -> Step in
            guard element is [String: Any], let data = try? JSONSerialization.data(withJSONObject: element) else {
                return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "a message must be an object"), id: .null))
            }
            return prepare(data)
        }
        let work = steps.compactMap { step -> Work? in if case .run(let work) = step { work } else { nil } }
        let immediate = steps.compactMap { step -> Data? in if case .respond(let data) = step { data } else { nil } }
        inFlight.start(key: nil) { [self] in
            var responses = immediate
            await withTaskGroup(of: Data?.self) { group in
                for item in work {
                    group.addTask { await self.execute(item) }
                }
                for await response in group { if let response { responses.append(response) } }
            }
            if !responses.isEmpty { writer.send(Self.array(responses)) }
        }
        return steps.contains { if case .exit = $0 { true } else { false } } ? .exit : .continueReading
    }

    /// A request ready to run: its method, and the message its params are decoded from.
    struct Work: Sendable {
        var id: RequestID
        var method: any RPCMethod.Type
        var body: Data
        var token: ProgressToken?
        var language: Language
    }

    private enum Step {
        case respond(Data)
        case run(Work)
        case ignore
        case exit
    }

    private func prepare(_ body: Data) -> Step {
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: body)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            let reason = (context.underlyingError.map(Self.describe)) ?? "the message is not valid JSON"
            return .respond(Self.response(error: RPCError(code: RPCError.parseError, message: "parse error: \(reason)"), id: .null))
        } catch {
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "a message must be an object"), id: .null))
        }
        let id: RequestID
        switch envelope.id {
        case .invalid:
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "“id” must be a string or a number"), id: .null))
        case .absent:
            guard envelope.jsonrpc == "2.0", let name = envelope.method else { return .ignore }
            return notification(name, envelope)
        case .valid(let valid):
            id = valid
        }
        guard envelope.jsonrpc == "2.0" else {
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "“jsonrpc” must be \"2.0\""), id: id))
        }
        guard let name = envelope.method else {
            return .respond(Self.response(error: RPCError(code: RPCError.invalidRequest, message: "“method” must be a string"), id: id))
        }
        if name == "exit" { return .exit }
        if envelope.params == .notObject {
            return .respond(Self.response(error: .invalidParams("params must be an object (by name)"), id: id))
        }
        // The lifecycle, decided in arrival order.
        let decision = state.withLock { state -> Result<Language, RPCError> in
            switch (state.phase, name) {
            case (.waiting, "initialize"):
                state.phase = .running
                if let locale = envelope.locale, let language = Language(code: locale) { state.language = language }
                return .success(state.language)
            case (.waiting, _):
                return .failure(RPCError(code: RPCError.notInitialized, message: "the server is not initialized: send “initialize” first"))
            case (.running, "initialize"):
                return .failure(RPCError(code: RPCError.invalidRequest, message: "the server is already initialized"))
            case (.running, "shutdown"):
                state.phase = .shutDown
                return .success(state.language)
            case (.running, _):
                return .success(state.language)
            case (.shutDown, _):
                return .failure(RPCError(code: RPCError.invalidRequest, message: "the server is shutting down; only “exit” is accepted"))
            }
        }
        let language: Language
        switch decision {
        case .success(let chosen): language = chosen
        case .failure(let error): return .respond(Self.response(error: error, id: id))
        }
        guard let method = RPCMethods.byName[name] else {
            return .respond(Self.response(error: RPCError(code: RPCError.methodNotFound, message: "no method “\(name)”"), id: id))
        }
        return .run(Work(id: id, method: method, body: body, token: envelope.workDoneToken, language: language))
    }

    private func notification(_ name: String, _ envelope: Envelope) -> Step {
        switch name {
        case "exit":
            return .exit
        case "$/cancelRequest":
            if let key = envelope.cancelID?.key { inFlight.cancel(key) }
            return .ignore
        default:
            // `initialized` and anything unknown: notifications get no answer.
            return .ignore
        }
    }

    // MARK: Running

    private func execute(_ work: Work) async -> Data? {
        let progress = work.token.map { ProgressNotifier(token: $0, title: work.method.name, writer: writer) }
        let context = RequestContext(service: service, language: work.language, limits: configuration.limits,
                                     progress: progress?.reporter ?? .none,
                                     allowedHostFolders: service.hostAccess.allowedFolders ?? [],
                                     session: RPCSessionInfo(name: configuration.serverName, version: configuration.version), watches: watches)
        progress?.begin()
        defer { progress?.end() }
        do {
            let result = try await invoke(work.method, body: work.body, context: context)
            return Self.response(result: result, id: work.id)
        } catch {
            return Self.response(error: rpcError(error, language: work.language), id: work.id)
        }
    }

    private func invoke<M: RPCMethod>(_ method: M.Type, body: Data, context: RequestContext) async throws -> Data {
        let params: M.Params
        do {
            params = try JSONDecoder().decode(ParamsEnvelope<M.Params>.self, from: body).params
        } catch let error as DecodingError {
            throw RPCError.from(error)
        }
        do {
            let result = try await M.run(params, context)
            if M.changesFiles { audit(M.self, params, outcome: "ok") }
            return try JSONEncoder.rpc.encode(result)
        } catch {
            if M.changesFiles { audit(M.self, params, outcome: CofferError.wrapping(error).kind.identifier) }
            throw error
        }
    }

    private func audit<M: RPCMethod>(_ method: M.Type, _ params: M.Params, outcome: String) {
        service.audit?.record(frontEnd: "rpc", method: M.name, paths: M.auditedPaths(params), outcome: outcome)
    }

    private func rpcError(_ error: any Error, language: Language) -> RPCError {
        switch error {
        case let error as RPCError: return error
        case let error as DecodingError: return RPCError.from(error)
        case let error as CofferError: return RPCError.failure(error, language: language)
        case is CancellationError: return RPCError.failure(CofferError(.cancelled), language: language)
        default:
            log("internal error: \(error)")
            return RPCError(code: RPCError.internalError, message: "internal error")
        }
    }

    // MARK: Writing

    private func send(error: RPCError, id: RequestID) {
        writer.send(Self.response(error: error, id: id))
    }

    static func response(result: Data, id: RequestID) -> Data {
        var data = Data(#"{"jsonrpc":"2.0","id":"#.utf8)
        data.append(id.json)
        data.append(contentsOf: Array(#","result":"#.utf8))
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
        FileHandle.standardError.write(Data("coffer rpc: \(text)\n".utf8))
    }
}
