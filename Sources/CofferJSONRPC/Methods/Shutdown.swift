/// `shutdown`: answered with `null`; the server refuses requests after it (the state change
/// is the server's, made when the request arrives).
struct Shutdown: RPCMethod {
    static let name = "shutdown"
    static func run(_ params: NoParams, _ context: RequestContext) async throws -> NullResult { NullResult() }
}
