public import CofferCore
import CofferRuntime
public import FileService
import Foundation

/// A front end an application adds to its command line: a subcommand with options of its
/// own, run on the same service as `coffer`'s own front ends.
///
/// Give the types to ``CofferApplication/init(name:version:extraMethods:frontEnds:extraMounts:)``;
/// `my-app status --json` then parses as `status` with the arguments `["--json"]`:
///
/// ```swift
/// struct Status: CofferFrontEnd {
///     static let command = "status"
///     static let summary = LocalizedText("Say how full each mount is", "显示各挂载点的用量")
///     var json = false
///
///     init(arguments: [String]) throws(CofferError) {
///         for argument in arguments {
///             guard argument == "--json" else {
///                 throw CofferError(.invalidArgument, detail: "unexpected argument “\(argument)”")
///             }
///             json = true
///         }
///     }
///
///     func run(_ context: FrontEndContext) async -> Int32 {
///         await context.withSession { session in
///             let space = try await session.perform(MeasureSpace(mount: "files"))
///             context.output("files: \(space.usedBytes) bytes")
///         }
///     }
/// }
/// ```
///
/// The options every front end takes (`--container`, `--lang`, `--mount`, `--document-types`,
/// `--s3-endpoint`, `--no-recents`, `--thumbnail-max-age`, `--thumbnail-max-size`, `--no-versions`,
/// `--versions-max-size`) are read by
/// the application wherever they stand, before or after the command, because they shape the
/// service the front end is given. Every other argument after the command is the front end's
/// own, and so is everything after `--`. `-h` and `--help` after the command print the front
/// end's ``summary`` and ``usage`` and exit with status 0, before anything is opened.
///
/// The front end reaches files only through sessions (``FrontEndContext/withSession(hostAccess:isLongLived:isolation:_:)``):
/// what an operation means, its audit entry and its errors are decided there, once for every
/// front end.
public protocol CofferFrontEnd: Sendable {
    /// The word that chooses this front end (`status`). It must not be one of `coffer`'s own
    /// (`rpc`, `mcp`, `serve`, `help`, `open-files`, `install-desktop`, `uninstall-desktop`) nor a
    /// name Coffer's sessions go by (`repl`, `web`, `share`): the program then stops with status 1.
    static var command: String { get }
    /// One line for the program's `--help`, in both of Coffer's languages.
    static var summary: LocalizedText { get }
    /// The front end's own options, for `my-app COMMAND --help`: a line such as `[--json]`,
    /// then what each does. `nil` (the default) when it takes none.
    static var usage: LocalizedText? { get }

    /// Reads the front end's own arguments, before anything is opened.
    ///
    /// - Throws: a `CofferError` of kind `invalidArgument` for arguments it does not take; the
    ///   program then says why with its usage and exits with status 2.
    init(arguments: [String]) throws(CofferError)

    /// Runs on the open service until the front end is done; returns the exit status (0 for
    /// success, 1 when something failed), with which the program then exits. Return only when
    /// what the front end started (threads, clients, processes, sessions) has ended.
    @MainActor
    func run(_ context: FrontEndContext) async -> Int32
}

extension CofferFrontEnd {
    /// No options of its own.
    public static var usage: LocalizedText? { nil }
}

/// What an application's front end runs with: the service on the open container, the user's
/// language, and the program's standard output and error.
public struct FrontEndContext: Sendable {
    /// The program's name (`my-app`), for messages.
    public let programName: String
    /// The front end's command (`status`): the name its sessions are audited under.
    public let command: String
    /// The service, composed with the standard mounts and the application's own.
    public let service: FileService
    /// The container the service works in.
    public let container: Container
    /// The language the user asked for (`--lang`, else `LANG`).
    public let language: Language
    /// The environment the program was started with.
    public let environment: [String: String]

    /// Writes one line to standard output.
    public func output(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Writes one line to standard error, after the program's name (`my-app: …`).
    public func error(_ line: String) {
        FileHandle.standardError.write(Data("\(programName): \(line)\n".utf8))
    }

    /// The message for `error` in the user's language, as the REPL words it.
    public func message(for error: CofferError) -> String {
        "\(error.userMessage(in: language))"
    }

    /// Opens a session named after the front end's command, runs `body` in it, then closes the
    /// session: work it still runs is cancelled and waited for, and uploads left open are
    /// discarded. Returns 0, or 1 after writing the message of an error `body` threw to
    /// standard error.
    ///
    /// What a request leaves out is decided by the session's defaults for front ends that
    /// are programs (RPC's row of `FrontEndDefaults`), whatever the command is called.
    ///
    /// - Parameters:
    ///   - hostAccess: the host folders the session may import from and export to (none by
    ///     default); the container is never one of them.
    ///   - isLongLived: whether the session stays open while a person or program works (a
    ///     server's connection): the service then keeps its search index live.
    ///   - isolation: the actor `body` runs on: the caller's, so the body may use what the
    ///     caller holds.
    ///   - body: what the front end does in the session; an error it throws is reported (a
    ///     `CofferError` with its own message, anything else as `CofferError.wrapping(_:)` words it).
    /// - Returns: the exit status: 0, or 1 when the session could not be opened or `body` threw.
    public func withSession(hostAccess: HostAccess = .nowhere, isLongLived: Bool = false,
                            isolation: isolated (any Actor)? = #isolation,
                            _ body: (Session) async throws -> Void) async -> Int32 {
        let session: Session
        do {
            session = try service.openSession(SessionOptions(frontEnd: command, language: language,
                                                             hostAccess: hostAccess, isLongLived: isLongLived,
                                                             defaults: .rpc))
        } catch {
            self.error(message(for: error))
            return 1
        }
        var status: Int32 = 0
        do {
            try await body(session)
        } catch {
            self.error(message(for: CofferError.wrapping(error)))
            status = 1
        }
        await session.close()
        return status
    }
}

/// The launch of an application's own front end: its `--help`, and its arguments read before
/// anything is opened (``prepare(_:)``); then its run on the service.
struct CustomLaunch: FrontEndLaunch {
    let type: any CofferFrontEnd.Type
    let arguments: [String]
    /// Made by ``prepare(_:)`` from the arguments.
    private var frontEnd: (any CofferFrontEnd)?

    init(type: any CofferFrontEnd.Type, arguments: [String]) {
        self.type = type
        self.arguments = arguments
    }

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        let (application, language) = (context.application, context.language)
        if context.options.frontEndHelp {
            context.output.line(CofferApplication.usage(of: type, program: application.name, language))
            context.output.flush()
            return 0
        }
        do {
            frontEnd = try type.init(arguments: arguments)
            return nil
        } catch {
            context.errors.line("\(application.name) \(type.command): \(error.userMessage(in: language))")
            context.errors.line(application.usage(language))
            context.errors.flush()
            return 2
        }
    }

    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        guard let frontEnd else { return 2 }  // `prepare` stopped the launch; never run then
        context.output.flush()
        let given = FrontEndContext(programName: context.application.name, command: type.command, service: service,
                                    container: container, language: context.language,
                                    environment: context.options.environment)
        return await frontEnd.run(given)
    }
}
