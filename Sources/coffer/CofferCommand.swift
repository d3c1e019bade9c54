import CofferCore
import CofferREPL
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
        case .rpc:
            let error = CofferError(.unsupported, detail: "rpc")
            errors.line("coffer: \(LocalizedText("The JSON-RPC server is not part of this build yet.", "此版本尚未包含 JSON-RPC 服务器。")(options.language)) \(error.userMessage(in: options.language).hint)")
            errors.flush()
            return 2
        case .commands, .interactive, .help:
            break
        }

        let service: FileService
        do {
            let container = try await Container.open(at: options.containerPath)
            service = try FileService.standard(container: container)
        } catch {
            errors.line("coffer: \(error.userMessage(in: options.language))")
            errors.flush()
            return 1
        }
        let interpreter = CommandInterpreter(service: service, language: options.language, output: output, errors: errors)

        switch options.action {
        case .commands(let script):
            return await interpreter.run(line: script) == .failure ? 1 : 0
        case .help(let words):
            return await interpreter.run(words: ["help"] + words) == .failure ? 1 : 0
        default:
            return await runLines(interpreter, prompt: isatty(0) == 1)
        }
    }

    /// Reads commands one line at a time from standard input. On a terminal a prompt is
    /// shown; piped input gets no prompt and no echo.
    static func runLines(_ interpreter: CommandInterpreter, prompt: Bool) async -> Int32 {
        var failed = false
        while true {
            if prompt {
                let text = "\(interpreter.currentFolder)> "
                FileHandle.standardOutput.write(Data(text.utf8))
            }
            guard let line = readLine(strippingNewline: true) else { break }
            switch await interpreter.run(line: line) {
            case .quit: return failed ? 1 : 0
            case .failure: failed = true
            case .success: break
            }
        }
        if prompt { FileHandle.standardOutput.write(Data("\n".utf8)) }
        return failed ? 1 : 0
    }
}
