import CofferCore
import CofferBackends
import CofferREPL
import CofferMCP
import CofferJSONRPC
import CofferRPC
import CofferS3
import CofferTransfers
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An application built on Coffer, with `coffer`'s command line and both front ends.
///
/// It parses the arguments (`-c`, piped standard input, the interactive REPL, `rpc`, and
/// the options `coffer --help` lists), opens the container, composes a `FileService` with
/// the standard mounts (`files:`, `trash:`, `staging:`) **plus the application's own**,
/// and hands it to the front end asked for. The `coffer` executable is this with no extra
/// mounts; `Examples/custom-backend` adds a `mem:` mount:
///
/// ```swift
/// @main struct App {
///     static func main() async {
///         await CofferApplication(name: "my-app") { container, registry in
///             [Mount(name: "mem", backend: InMemoryBackend(mountName: "mem"))]
///         }.main()
///     }
/// }
/// ```
///
/// The mounts are registered in that one closure; neither front end needs to know about
/// them: `mounts`, completion, `initialize` and every `files/*` method see them all. An
/// application adds JSON-RPC methods of its own the same way, with `extraMethods`.
public struct CofferApplication: Sendable {
    /// The program's name, in messages, usage and its default container folder.
    public var name: String
    public var version: String
    /// The application's own mounts, made once the container is open.
    public var extraMounts: @Sendable (Container, TypeRegistry) throws(CofferError) -> [Mount]
    /// The application's own JSON-RPC methods, answered beside Coffer's by `rpc`.
    public var extraMethods: [any RPCMethod.Type]

    public init(name: String = "coffer", version: String = "0.1.0", extraMethods: [any RPCMethod.Type] = [],
                extraMounts: @escaping @Sendable (Container, TypeRegistry) throws(CofferError) -> [Mount] = { _, _ in [] }) {
        self.name = name
        self.version = version
        self.extraMethods = extraMethods
        self.extraMounts = extraMounts
    }

    /// Runs with the process's arguments and environment, then exits with the status.
    @MainActor
    public func main() async -> Never {
        exit(await run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
    }

    /// Runs with these arguments (without the program name); returns the exit status:
    /// 0 for success, 1 when a command failed, 2 for bad arguments.
    @MainActor
    public func run(arguments: [String], environment: [String: String]) async -> Int32 {
        let options: LaunchOptions
        do {
            options = try LaunchOptions(arguments: arguments, environment: environment, application: name)
        } catch {
            let language = Language.preferred(environment: environment)
            FileHandle.standardError.write(Data("\(name): \(error.userMessage(in: language))\n".utf8))
            FileHandle.standardError.write(Data("\(LaunchOptions.usage(language, program: name))\n".utf8))
            return 2
        }
        return await run(options)
    }

    @MainActor
    func run(_ options: LaunchOptions) async -> Int32 {
        let output = TextOutput.standardOutput()
        let errors = TextOutput.standardError()
        switch options.action {
        case .showHelp:
            output.line(LaunchOptions.usage(options.language, program: name))
            output.flush()
            return 0
        case .showVersion:
            output.line("\(name) \(version)")
            output.flush()
            return 0
        case .rpc, .mcp, .serve, .commands, .interactive, .help, .openFiles, .installDesktop, .uninstallDesktop:
            break
        }

        let manifest: DocumentTypesManifest
        do {
            manifest = try documentTypes(options)
        } catch {
            // A bad --document-types is a bad argument: status 2, like the others.
            return stopping(with: "\(error.userMessage(in: options.language))", status: 2, errors)
        }
        let registry = manifest.registry()
        switch options.action {
        case .installDesktop:
            return desktopInstaller(options, manifest: manifest, registry: registry).install(output: output, errors: errors)
        case .uninstallDesktop:
            return desktopInstaller(options, manifest: manifest, registry: registry).uninstall(output: output, errors: errors)
        default:
            break
        }
        let methods: RPCMethodRegistry
        do {
            methods = try RPCMethodRegistry.standard.adding(extraMethods)
        } catch {
            return stopping(with: "\(error.userMessage(in: options.language))", status: 1, errors)
        }
        // Programs may use only the folders allowed at start, each of which must be a folder
        // (a bad one is a bad argument).
        if options.action.servesPrograms {
            for folder in options.allowedHostFolders {
                do { _ = try HostAccessPolicy.only([folder]) } catch {
                    return stopping(with: "--allow-host “\(folder)”: \(error.userMessage(in: options.language))", status: 2, errors)
                }
            }
        }
        // The socket first: a path that cannot be listened on is a bad argument, found before
        // anything else happens.
        var listener: UnixSocketListener?
        var stops: StopSignals?
        if options.action == .serve { stops = StopSignals() }
        if options.action == .rpc, let socketPath = options.socketPath {
            // Caught before the socket exists: a SIGTERM right after it appears stops the
            // server cleanly (and removes the socket) rather than killing it.
            stops = StopSignals()
            do {
                listener = try UnixSocketListener(path: socketPath)
            } catch {
                return stopping(with: "--listen: \(error.message(in: options.language))", status: 2, errors)
            }
        }
        let service: FileService
        let container: Container
        do {
            container = try await Container.open(at: options.containerPath)
            let added = try extraMounts(container, registry)
                + Self.s3Mounts(options, container: container, registry: registry, environment: options.environment)
            try Self.checkMountNames(added)
            service = try FileService.standard(container: container, registry: registry, extraMounts: added)
        } catch {
            listener?.close()
            return stopping(with: "\(error.userMessage(in: options.language))", status: 1, errors)
        }
        if options.action == .serve {
            return await serveWeb(service, container: container, options: options, stops: stops ?? StopSignals(),
                                  output: output, errors: errors)
        }
        if options.action == .mcp {
            var configuration = MCPServer.Configuration(filesRoot: container.userFilesPath, language: options.language,
                                                        version: version)
            configuration.serverName = name
            configuration.hostAccess = .only(options.allowedHostFolders)
            return await MCPServer.serveStandardIO(service, configuration: configuration)
        }
        if options.action == .rpc {
            var configuration = RPCServer.Configuration(language: options.language, version: version)
            configuration.serverName = name
            configuration.framing = options.framing.flatMap(Framing.init(rawValue:))
            configuration.hostAccess = .only(options.allowedHostFolders)
            configuration.methods = methods
            return await RPCFrontEnd(configuration: configuration, listener: listener, stops: stops).serve(service)
        }

        if case .openFiles(let paths) = options.action {
            return await openFiles(paths, service: service, manifest: manifest, options: options, output: output, errors: errors)
        }

        // A person at the REPL may name any host path their account can read. On a terminal
        // the session stays a while: the service keeps the search index live for it.
        let interactive = isatty(0) == 1 && !Self.isOneShot(options.action)
        if interactive { TransferQueue.resumeInterrupted(in: service, language: options.language) }
        let session: Session
        do {
            session = try service.openSession(SessionOptions(frontEnd: "repl", language: options.language,
                                                             hostAccess: .anywhere, isLongLived: interactive))
        } catch {
            return stopping(with: "\(error.userMessage(in: options.language))", status: 1, errors)
        }
        let interpreter = CommandInterpreter(session: session, output: output, errors: errors)
        interpreter.programName = name
        if output.isTerminal { interpreter.imageProtocol = ImageProtocol.detect(ProcessInfo.processInfo.environment) }
        let status: Int32
        switch options.action {
        case .commands(let script):
            var lines = [script].makeIterator()
            status = await PipedSession(interpreter: interpreter).run(lines: { lines.next() })
        case .help(let words):
            status = await interpreter.run(words: ["help"] + words) == .failure ? 1 : 0
        default:
            status = interactive ? await self.interactive(interpreter, container: container)
                                 : await PipedSession(interpreter: interpreter).run()
        }
        await interpreter.endBackgroundWork(waiting: !interactive)
        await session.close()
        return status
    }

    /// Says on standard error, after the program's name, why it stops; returns `status`.
    func stopping(with message: String, status: Int32, _ errors: TextOutput) -> Int32 {
        errors.line("\(name): \(message)")
        errors.flush()
        return status
    }

    private static func isOneShot(_ action: LaunchOptions.Action) -> Bool {
        switch action {
        case .commands, .help: true
        default: false
        }
    }

    /// An application's mounts must be typeable (`mem:`) and must not take a standard name.
    /// The buckets of `--mount NAME=s3://…`, configured as the AWS tools are (endpoint,
    /// region and keys from the environment and `~/.aws`). Nothing is sent to the server
    /// here: the first request is made by the first command that uses the mount.
    static func s3Mounts(_ options: LaunchOptions, container: Container, registry: TypeRegistry,
                         environment: [String: String]) throws(CofferError) -> [Mount] {
        var mounts: [Mount] = []
        for (name, text) in options.s3Mounts {
            let location = try S3Location(parsing: text)
            let configuration = try S3Configuration.resolve(location, endpoint: options.s3Endpoint, environment: environment,
                                                            home: environment["HOME"] ?? NSHomeDirectory())
            let backend = S3Backend(configuration: configuration, spoolFolder: container.temporaryPath,
                                    ledgerFolder: container.appDataPath + "/S3Uploads", cacheFolder: container.remoteCachePath,
                                    registry: registry)
            mounts.append(Mount(name: name, backend: backend,
                                description: LocalizedText("\(location) on \(configuration.endpoint.host ?? "S3")",
                                                           "\(configuration.endpoint.host ?? "S3") 上的 \(location)")))
        }
        return mounts
    }

    static func checkMountNames(_ mounts: [Mount]) throws(CofferError) {
        var taken: Set<String> = [VirtualPath.defaultMount, "trash", "staging"]
        for mount in mounts {
            guard VirtualPath.isValidMountName(mount.name) else {
                throw CofferError(.invalidArgument, detail: "mount name “\(mount.name)”: use a letter, then letters, digits, - or _")
            }
            guard taken.insert(mount.name).inserted else {
                throw CofferError(.invalidArgument, detail: "mount name “\(mount.name)” is already used")
            }
        }
    }

    /// The application's document types: `--document-types`, else the built-in manifest.
    /// A manifest that breaks a rule is refused, as the Info.plist generator refuses it.
    func documentTypes(_ options: LaunchOptions) throws(CofferError) -> DocumentTypesManifest {
        guard let path = options.documentTypesPath else {
            return try DocumentTypesManifest(jsonData: Data(PackageResources.DocumentTypes_json))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CofferError(.invalidArgument, detail: "--document-types “\(path)” cannot be read")
        }
        let manifest: DocumentTypesManifest
        do {
            manifest = try DocumentTypesManifest(jsonData: data)
        } catch {
            // The JSON's fault, with its place: an argument to fix, not a damaged file.
            throw CofferError(.invalidArgument, detail: "--document-types “\(path)”: \(error.detail ?? "not a manifest")")
        }
        let validation = manifest.validate()
        guard validation.isValid else {
            throw CofferError(.invalidArgument, detail: "--document-types: " + validation.errors.joined(separator: "; "))
        }
        return manifest
    }

    /// The REPL on a terminal: readline, history in `AppData/history`, completion from the
    /// session; colours and progress bars where the output is a terminal.
    @MainActor
    func interactive(_ interpreter: CommandInterpreter, container: Container) async -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        interpreter.outputStyle = .forDescriptor(1, environment: environment)
        interpreter.errorStyle = .forDescriptor(2, environment: environment)
        if isatty(2) == 1 {
            interpreter.progressBar = { label in ProgressBar(label: label) }
        }
        let history = HistoryFile(path: container.appDataPath + "/history")
        let session = InteractiveSession(
            interpreter: interpreter, editor: ReadlineEditor(historyLimit: history.limit), historyFile: history,
            completionSource: ServiceCompletionSource(session: interpreter.session))
        return await session.run()
    }
}
