import CofferCore
public import CofferJSONRPC
import CofferTransfers
public import FileService

/// `coffer rpc`: Coffer's JSON-RPC methods for editors, IDEs and other programs, on standard
/// I/O (one client) or on a Unix socket (`--listen unix:PATH`, many clients at once).
///
/// The JSON-RPC machinery — framing, the connection, the LSP-style dialect, Coffer's method
/// set — is `CofferJSONRPC`'s, shared with the MCP and web front ends; this front end only
/// chooses where to serve and starts what a long-running server resumes.
public struct RPCFrontEnd: Sendable {
    public var configuration: RPCServer.Configuration
    /// Where to serve many clients; `nil` serves one on standard I/O.
    public var listener: UnixSocketListener?
    /// What stops a socket server (SIGTERM, SIGINT), caught before the socket exists.
    public var stops: StopSignals?

    public init(configuration: RPCServer.Configuration, listener: UnixSocketListener? = nil, stops: StopSignals? = nil) {
        self.configuration = configuration
        self.listener = listener
        self.stops = stops
    }

    /// Serves until the client hangs up (standard I/O) or a stop signal (a socket), and returns
    /// the exit status. Downloads a stopped process left running go on in the background.
    public func serve(_ service: FileService) async -> Int32 {
        TransferQueue.resumeInterrupted(in: service, language: configuration.language)
        guard let listener else { return await RPCServer.serveStandardIO(service, configuration: configuration) }
        return await RPCServer.serve(service, on: listener, configuration: configuration, stops: stops ?? StopSignals())
    }
}
