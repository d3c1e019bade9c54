import CofferCore
import CofferBackends
import CofferREPL
import CofferRPC
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `coffer`: opens a container and runs the command interpreter over it.
///
/// This is one application of the Coffer libraries: it parses its arguments, composes a
/// `FileService` on the standard container, and hands it to a front end.
@main
struct CofferCommand {
    static let version = "0.1.0"

    @MainActor
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        let options: LaunchOptions
        do {
            options = try LaunchOptions(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
        } catch {
            let language = Language.preferred(environment: environment)
            FileHandle.standardError.write(Data("coffer: \(error.userMessage(in: language))\n".utf8))
            FileHandle.standardError.write(Data("\(LaunchOptions.usage(language))\n".utf8))
            exit(2)
        }
        exit(await run(options))
    }

    @MainActor
    static func run(_ options: LaunchOptions) async -> Int32 {
        let output = TextOutput.standardOutput()
        let errors = TextOutput.standardError()
        switch options.action {
        case .showHelp:
            output.line(LaunchOptions.usage(options.language))
            output.flush()
            return 0
        case .showVersion:
            output.line("coffer \(version)")
            output.flush()
            return 0
        case .rpc, .commands, .interactive, .help:
            break
        }

        let registry: TypeRegistry
        do {
            registry = try documentTypes(options).registry()
        } catch {
            // A bad --document-types is a bad argument: status 2, like the others.
            errors.line("coffer: \(error.userMessage(in: options.language))")
            errors.flush()
            return 2
        }
        // A person at the REPL may name any host path their account can read; a program only
        // the folders allowed at start, each of which must be a folder (a bad one is a bad argument).
        var hostAccess = HostAccessPolicy.anywhere
        if options.action == .rpc {
            for folder in options.allowedHostFolders {
                do { _ = try HostAccessPolicy.only([folder]) } catch {
                    errors.line("coffer: --allow-host “\(folder)”: \(error.userMessage(in: options.language))")
                    errors.flush()
                    return 2
                }
            }
            hostAccess = (try? HostAccessPolicy.only(options.allowedHostFolders)) ?? .nowhere
        }
        let service: FileService
        let container: Container
        do {
            container = try await Container.open(at: options.containerPath)
            service = try FileService.standard(container: container, registry: registry, hostAccess: hostAccess)
        } catch {
            errors.line("coffer: \(error.userMessage(in: options.language))")
            errors.flush()
            return 1
        }
        if options.action == .rpc {
            var configuration = RPCServer.Configuration(language: options.language, version: version)
            configuration.framing = options.framing.flatMap(Framing.init(rawValue:))
            return await RPCServer(service: service, configuration: configuration).run()
        }
        let interpreter = CommandInterpreter(service: service, language: options.language, output: output, errors: errors)

        switch options.action {
        case .commands(let script):
            var lines = [script].makeIterator()
            return await PipedSession(interpreter: interpreter).run(lines: { lines.next() })
        case .help(let words):
            return await interpreter.run(words: ["help"] + words) == .failure ? 1 : 0
        default:
            guard isatty(0) == 1 else { return await PipedSession(interpreter: interpreter).run() }
            return await interactive(interpreter, container: container, options: options)
        }
    }

    /// The application's document types: `--document-types`, else the built-in manifest.
    /// A manifest that breaks a rule is refused, as the Info.plist generator refuses it.
    static func documentTypes(_ options: LaunchOptions) throws(CofferError) -> DocumentTypesManifest {
        guard let path = options.documentTypesPath else {
            return try DocumentTypesManifest(jsonData: Data(PackageResources.DocumentTypes_json))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CofferError(.noSuchFile, detail: "--document-types")
        }
        let manifest = try DocumentTypesManifest(jsonData: data)
        let validation = manifest.validate()
        guard validation.isValid else {
            throw CofferError(.invalidArgument, detail: "--document-types: " + validation.errors.joined(separator: "; "))
        }
        return manifest
    }

    /// The REPL on a terminal: readline, history in `AppData/history`, completion from the
    /// service; colours and progress bars where the output is a terminal.
    @MainActor
    static func interactive(_ interpreter: CommandInterpreter, container: Container, options: LaunchOptions) async -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        interpreter.outputStyle = .forDescriptor(1, environment: environment)
        interpreter.errorStyle = .forDescriptor(2, environment: environment)
        if isatty(2) == 1 {
            interpreter.progressBar = { label in ProgressBar(label: label) }
        }
        // A person may stay a while: keep the search index current as files change.
        let service = interpreter.service
        Task { await service.startIndexing(watching: true) }
        let history = HistoryFile(path: container.appDataPath + "/history")
        let session = InteractiveSession(
            interpreter: interpreter, editor: ReadlineEditor(historyLimit: history.limit), historyFile: history,
            completionSource: ServiceCompletionSource(service: interpreter.service))
        return await session.run()
    }
}
