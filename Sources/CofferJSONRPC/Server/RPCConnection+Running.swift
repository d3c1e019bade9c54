import CofferCore
import FileService
import Foundation
import Synchronization

/// Running: each request as a task of the session, or at once where the storage answers at once.
extension RPCConnection {

    /// Answers a request on the reader's thread when its method can be answered at once
    /// (``ImmediateRPCMethod``) and is; `false` to run it as a task instead. Nothing waits
    /// here for long: the method only reads metadata from storage that answers without
    /// waiting, so the next request is read a few microseconds later, and a slow request
    /// is never among these.
    func answerImmediately(_ work: Work) -> Bool {
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

    func context(progress: (any ProgressDisplay)?) -> RequestContext {
        guard let progress else { return immediateContext }
        return Self.context(session: session, configuration: configuration, connection: connection,
                            largeAnswers: largeAnswers, lifecycle: lifecycle, progress: progress)
    }

    static func context(session: Session, configuration: RPCServer.Configuration, connection: any MessageConnection,
                        largeAnswers: RequestSlots, lifecycle: any RPCLifecycle,
                        progress: (any ProgressDisplay)?) -> RequestContext {
        var context = RequestContext(session: session, limits: configuration.limits, progress: progress,
                                     server: ServerInfo(name: configuration.serverName, version: configuration.version),
                                     methods: configuration.methods, lifecycle: lifecycle, connection: connection,
                                     largeAnswers: largeAnswers)
        context.hints = configuration.hints
        return context
    }

    func execute(_ work: Work) async -> Data? {
        let progress = work.token.map { [connection] token in
            configuration.dialect.progressDisplay(token: token, method: work.method.name) { connection.send($0) }
        }
        let context = context(progress: progress)
        let reported = await session.reporting { () async -> Result<Data, any Error> in
            do {
                return .success(try await invoke(work.method, params: work.params, id: work.id, context: context))
            } catch {
                return .failure(error)
            }
        }
        switch reported.value {
        case .success(let response):
            return reported.warnings.isEmpty ? response : Self.response(response, adding: reported.warnings, language: session.language)
        case .failure(let error):
            let failure = rpcError(error)
            if failure.code == RPCError.requestCancelled, !configuration.dialect.answersCancelledRequests { return nil }
            return Self.response(error: failure, id: work.id)
        }
    }

    /// The response to a request of `method`.
    func invoke<M: RPCMethod>(_ method: M.Type, params: Data?, id: RequestID, context: RequestContext) async throws -> Data {
        try Self.response(encoding: try await M.run(try Self.params(of: M.self, from: params), context), id: id)
    }

    func invokeImmediately<M: ImmediateRPCMethod>(_ method: M.Type, params: Data?, id: RequestID,
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

    func rpcError(_ error: any Error) -> RPCError {
        switch error {
        case let error as RPCError: return error
        case let error as DecodingError: return RPCError.from(error)
        case let error as CofferError: return RPCError.failure(error, language: session.language, hints: configuration.hints)
        case is CancellationError: return RPCError.failure(CofferError(.cancelled), language: session.language, hints: configuration.hints)
        default:
            log("internal error: \(error)")
            return RPCError(code: RPCError.internalError, message: "internal error")
        }
    }
}
