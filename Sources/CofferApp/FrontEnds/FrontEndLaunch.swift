import CofferCore
import CofferRuntime
import FileService

/// One of `coffer`'s front ends as the command line starts it: what it checks before the
/// container is opened (its own options), and how it runs on the service.
///
/// ``CofferApplication`` parses the arguments, asks the action's launch to ``prepare(_:)``,
/// opens the container and the service, and hands them to ``run(_:)``: one small type per
/// front end (`REPLLaunch`, `RPCLaunch`, `MCPLaunch`, `WebLaunch`, `OpenFilesLaunch`), so a new
/// front end of Coffer's is a new type and a case in ``CofferApplication/launch(for:)``. An
/// application's own front ends come in through the public ``CofferFrontEnd`` and run as a
/// `CustomLaunch`.
protocol FrontEndLaunch {
    /// Checks what can be checked before anything is opened (a socket to listen on, host
    /// folders that must exist); a status to stop with, or `nil` to go on.
    mutating func prepare(_ context: LaunchContext) -> Int32?

    /// Runs the front end on the open service until it ends; returns the exit status.
    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32

    /// Gives back what ``prepare(_:)`` took (a socket) when the service could not be opened.
    func abandon()
}

extension FrontEndLaunch {
    mutating func prepare(_ context: LaunchContext) -> Int32? { nil }
    func abandon() {}
}

/// What every launch is given: the application, the options, the document types and where
/// to write.
struct LaunchContext {
    let application: CofferApplication
    let options: LaunchOptions
    let manifest: DocumentTypesManifest
    let output: TextOutput
    let errors: TextOutput

    var language: Language { options.language }

    /// Says on standard error, after the program's name, why it stops; returns `status`.
    func stopping(with message: String, status: Int32) -> Int32 {
        application.stopping(with: message, status: status, errors)
    }
}
