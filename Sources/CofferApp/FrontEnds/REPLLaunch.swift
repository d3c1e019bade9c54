import CofferCore
import CofferREPL
import CofferRuntime
import CofferTransfers
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The REPL: commands from `-c`, from a pipe, or typed at a terminal (readline), and `help`.
struct REPLLaunch: FrontEndLaunch {
    let action: LaunchOptions.Action

    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        // A person at the REPL may name any host path their account can read. On a terminal
        // the session stays a while: the service keeps the search index live for it.
        let interactive = isatty(0) == 1 && !Self.isOneShot(action)
        if interactive { TransferQueue.resumeInterrupted(in: service, language: context.options.language) }
        let session: Session
        do {
            session = try service.openSession(SessionOptions(frontEnd: "repl", language: context.options.language,
                                                             hostAccess: .anywhere, isLongLived: interactive))
        } catch {
            return context.stopping(with: "\(error.userMessage(in: context.language))", status: 1)
        }
        let interpreter = CommandInterpreter(session: session, output: context.output, errors: context.errors)
        interpreter.programName = context.application.name
        if context.output.isTerminal { interpreter.imageProtocol = ImageProtocol.detect(ProcessInfo.processInfo.environment) }
        let status: Int32
        switch action {
        case .commands(let scripts):
            var lines = scripts.makeIterator()
            status = await PipedSession(interpreter: interpreter).run(lines: { lines.next() })
        case .help(let words):
            status = await interpreter.run(words: ["help"] + words) == .failure ? 1 : 0
        default:
            status = interactive ? await Self.interactive(interpreter, container: container)
                                 : await PipedSession(interpreter: interpreter).run()
        }
        await interpreter.endBackgroundWork(waiting: !interactive)
        await session.close()
        return status
    }

    private static func isOneShot(_ action: LaunchOptions.Action) -> Bool {
        switch action {
        case .commands, .help: true
        default: false
        }
    }

    /// The REPL on a terminal: readline, history in `AppData/history`, completion from the
    /// session; colours and progress bars where the output is a terminal.
    @MainActor
    static func interactive(_ interpreter: CommandInterpreter, container: Container) async -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        interpreter.outputStyle = .forDescriptor(1, environment: environment)
        interpreter.errorStyle = .forDescriptor(2, environment: environment)
        if isatty(2) == 1 {
            interpreter.progressBar = { label in ProgressBar(label: label) }
        }
        let history = HistoryFile(path: container.historyPath)
        let session = InteractiveSession(
            interpreter: interpreter, editor: ReadlineEditor(historyLimit: history.limit), historyFile: history,
            completionSource: ServiceCompletionSource(session: interpreter.session))
        return await session.run()
    }
}
