import CofferCore
import CofferJSONRPC
import CofferRPC
import CofferRuntime
import FileService

/// `coffer rpc [--listen unix:PATH] [--framing lsp|ndjson] [--allow-host DIR]…`, or `coffer rpc --connect unix:PATH`.
struct RPCLaunch: FrontEndLaunch {
    private var methods = RPCMethodRegistry.standard
    private var listener: UnixSocketListener?
    private var stops: StopSignals?

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        if let path = context.options.connectPath {
            // A relay to a running server: no container of its own.
            do {
                return try SocketRelay.run(connectingTo: path)
            } catch {
                return context.stopping(with: "--connect: \(error.message)", status: 1)
            }
        }
        do {
            methods = try RPCMethodRegistry.standard.adding(context.application.extraMethods)
        } catch {
            return context.stopping(with: "\(error.userMessage(in: context.language))", status: 1)
        }
        if let refused = AllowedHostFolders.check(context) { return refused }
        // The socket first: a path that cannot be listened on is a bad argument, found before
        // anything else happens. Signals are caught before the socket exists: a SIGTERM right
        // after it appears stops the server cleanly (and removes the socket).
        guard let socketPath = context.options.socketPath else { return nil }
        stops = StopSignals()
        do {
            listener = try UnixSocketListener(path: socketPath)
        } catch {
            return context.stopping(with: "--listen: \(error.message(in: context.language))", status: 2)
        }
        return nil
    }

    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        let options = context.options
        var configuration = RPCServer.Configuration(language: options.language, version: context.application.version)
        configuration.serverName = context.application.name
        configuration.framing = options.framing.flatMap(Framing.init(rawValue:))
        configuration.hostAccess = .only(options.allowedHostFolders)
        configuration.methods = methods
        if let listener {
            // One line when it is ready, as serve and mcp --listen say theirs: a script may wait for it.
            context.output.line(LocalizedText("Coffer is serving JSON-RPC at unix:\(listener.path)",
                                              "Coffer 正在 unix:\(listener.path) 上提供 JSON-RPC 服务")(context.language))
            context.output.flush()
        }
        return await RPCFrontEnd(configuration: configuration, listener: listener, stops: stops).serve(service)
    }

    /// A socket opened in ``prepare(_:)`` is closed when the service cannot be opened.
    func abandon() { listener?.close() }
}
