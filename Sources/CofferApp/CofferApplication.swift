import CCofferSystem
public import CofferCore
import CofferPreview
import CofferREPL
public import CofferJSONRPC
import CofferRuntime
import CofferS3
public import FileService
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
/// application adds JSON-RPC methods of its own the same way, with `extraMethods`, and
/// subcommands of its own with `frontEnds` (``CofferFrontEnd``).
public struct CofferApplication: Sendable {
    /// The program's name, in messages, usage and its default container folder.
    public var name: String
    /// What `--version` and RPC's `serverInfo` say.
    public var version: String
    /// The application's own mounts, made once the container is open.
    public var extraMounts: @Sendable (Container, TypeRegistry) throws(CofferError) -> [Mount]
    /// The application's own JSON-RPC methods, answered beside Coffer's by `rpc`.
    public var extraMethods: [any RPCMethod.Type]

    /// The application's own front ends, each a subcommand (``CofferFrontEnd``).
    public var frontEnds: [any CofferFrontEnd.Type] = []

    /// An application with `coffer`'s front ends.
    ///
    /// - Parameters:
    ///   - name: the program's name: in messages, usage, `--version`, RPC's `serverInfo`, and
    ///     its default container folder (`~/.local/share/NAME`).
    ///   - version: what `--version` and `serverInfo` say.
    ///   - extraMethods: JSON-RPC methods of the application's own, answered by `rpc`.
    ///   - extraMounts: makes the application's own mounts once the container is open. A
    ///     name that is not a letter followed by letters, digits, `-` or `_`, or that is
    ///     already taken (`files`, `trash`, `staging`), stops the program with status 1.
    public init(name: String = "coffer", version: String = "0.1.0", extraMethods: [any RPCMethod.Type] = [],
                extraMounts: @escaping @Sendable (Container, TypeRegistry) throws(CofferError) -> [Mount] = { _, _ in [] }) {
        self.name = name
        self.version = version
        self.extraMethods = extraMethods
        self.extraMounts = extraMounts
    }

    /// An application with `coffer`'s front ends and its own (``CofferFrontEnd``): each is a
    /// subcommand, listed by `--help`, with options of its own.
    public init(name: String, version: String = "0.1.0", extraMethods: [any RPCMethod.Type] = [],
                frontEnds: [any CofferFrontEnd.Type],
                extraMounts: @escaping @Sendable (Container, TypeRegistry) throws(CofferError) -> [Mount] = { _, _ in [] }) {
        self.init(name: name, version: version, extraMethods: extraMethods, extraMounts: extraMounts)
        self.frontEnds = frontEnds
    }

    /// Runs with the process's arguments and environment, then exits with the status.
    @MainActor
    public func main() async -> Never {
        let arguments = CommandLine.arguments
        // A copy of this program started to decode one untrusted file (Decoder, Security.md).
        if arguments.count > 1, arguments[1] == DecoderWorker.argument { exit(DecoderWorker.main(arguments)) }
        // Previews decode in such copies, bounded in time and memory, killed when cancelled.
        Decoder.useChildProcesses(executable: "/proc/self/exe")
        // Servers hold a descriptor per client, upload and watch: up to 65,536 of them when the
        // system allows (not more: starting a program closes every descriptor up to the limit).
        var files = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < min(files.rlim_max, 65_536) {
            files.rlim_cur = min(files.rlim_max, 65_536)
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        }
        // glibc gives each thread that allocates an arena of its own, up to eight per core, and
        // a server's threads (a hundred of CivetWeb's, the indexer's, the pool's) mostly wait on
        // the network or the disk: two arenas keep a busy server's memory about 9 MiB lower. And
        // glibc maps a large block on its own only until one is freed, then keeps such blocks
        // (each upload's buffers of a MiB) in the arenas, where they stay after use: a fixed
        // threshold gives them back.
        _ = coffer_tune_malloc(2, 256 * 1024)
        exit(await run(arguments: Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
    }

    /// Runs with these arguments (without the program name); returns the exit status:
    /// 0 for success, 1 when a command failed, 2 for bad arguments.
    @MainActor
    public func run(arguments: [String], environment: [String: String]) async -> Int32 {
        let options: LaunchOptions
        do {
            try checkFrontEnds()
        } catch {
            // The application's own mistake, not the user's: no usage, status 1.
            FileHandle.standardError.write(Data("\(name): \(error.userMessage(in: Language.preferred(environment: environment)))\n".utf8))
            return 1
        }
        do {
            options = try LaunchOptions(arguments: arguments, environment: environment, application: name,
                                        commands: Set(frontEnds.map { $0.command }))
        } catch {
            let language = Language.preferred(environment: environment)
            FileHandle.standardError.write(Data("\(name): \(error.userMessage(in: language))\n".utf8))
            FileHandle.standardError.write(Data("\(usage(language))\n".utf8))
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
            output.line(usage(options.language))
            output.flush()
            return 0
        case .showVersion:
            output.line("\(name) \(version)")
            output.flush()
            return 0
        case .rpc, .mcp, .serve, .mount, .commands, .interactive, .help, .openFiles, .installDesktop, .uninstallDesktop, .custom:
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
        let context = LaunchContext(application: self, options: options, manifest: manifest, output: output, errors: errors)
        var launch = launch(for: options.action)
        if let status = launch.prepare(context) { return status }
        let service: FileService
        let container: Container
        do {
            container = try await Container.open(at: options.containerPath)
            let added = try extraMounts(container, registry)
                + Self.s3Mounts(options, container: container, registry: registry, environment: options.environment)
            try Self.checkMountNames(added)
            service = try FileService.standard(container: container, registry: registry, extraMounts: added,
                                               recordsRecents: options.recordsRecents, cacheLimits: options.cacheLimits,
                                               versions: options.versions)
        } catch {
            launch.abandon()
            return stopping(with: "\(error.userMessage(in: options.language))", status: 1, errors)
        }
        return await launch.run(context, service: service, container: container)
    }

    /// The front end an action starts: one small type each.
    func launch(for action: LaunchOptions.Action) -> any FrontEndLaunch {
        switch action {
        case .custom(let command, let arguments):
            // Only the application's own commands parse as `.custom`.
            CustomLaunch(type: frontEnds.first { $0.command == command }!, arguments: arguments)
        case .rpc: RPCLaunch()
        case .mcp: MCPLaunch()
        case .serve: WebLaunch()
        case .mount: MountLaunch()
        case .openFiles(let paths): OpenFilesLaunch(paths: paths)
        default: REPLLaunch(action: action)
        }
    }

    /// The usage text, with the application's own front ends after `coffer`'s.
    func usage(_ language: Language) -> String {
        var text = LaunchOptions.usage(language, program: name)
        guard !frontEnds.isEmpty else { return text }
        text += language == .english ? "\n\nThe application's own commands:" : "\n\n本应用自己的命令："
        let width = frontEnds.map { $0.command.count }.max() ?? 0
        for frontEnd in frontEnds {
            text += "\n  \(name) \(frontEnd.command.padding(toLength: width, withPad: " ", startingAt: 0))  \(frontEnd.summary(language))"
        }
        return text
    }

    /// `my-app COMMAND --help`: the front end's summary and its options.
    static func usage(of frontEnd: any CofferFrontEnd.Type, program: String, _ language: Language) -> String {
        var text = "\(program) \(frontEnd.command): \(frontEnd.summary(language))"
        if let usage = frontEnd.usage { text += "\n\n" + usage(language) }
        return text
    }

    /// Every application command must be typeable and must not take one of `coffer`'s own
    /// words, nor a front end's name the audit log and the session defaults already use
    /// (`repl`, `web`, `share`).
    func checkFrontEnds() throws(CofferError) {
        let reserved: Set = ["rpc", "mcp", "serve", "mount", "help", "open-files", "install-desktop", "uninstall-desktop",
                             "repl", "web", "share"]
        var taken = Set<String>()
        for frontEnd in frontEnds {
            let command = frontEnd.command
            guard let first = command.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII,
                  command.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") })
            else {
                throw CofferError(.invalidArgument, detail: "front-end command “\(command)”: use a letter, then letters, digits or -")
            }
            guard !reserved.contains(command), taken.insert(command).inserted else {
                throw CofferError(.invalidArgument, detail: "front-end command “\(command)” is already used")
            }
        }
    }

    /// Says on standard error, after the program's name, why it stops; returns `status`.
    func stopping(with message: String, status: Int32, _ errors: TextOutput) -> Int32 {
        errors.line("\(name): \(message)")
        errors.flush()
        return status
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
                                    ledgerFolder: container.s3LedgerPath, cacheFolder: container.remoteCachePath,
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
}
