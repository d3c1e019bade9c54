public import CofferCore
public import CofferRuntime
public import FileService

/// Runs REPL commands in a ``Session``: it turns a command's words into an operation
/// (``CopyItem``, ``TrashItems``…), performs it, and prints the result. It holds no file
/// logic of its own, and decides nothing an operation decides (defaults, where a copy
/// lands, the audit entry).
///
/// It lives on the main actor: a REPL reads one line at a time, and the session may cancel
/// the task running a command (Ctrl-C) while the interpreter waits on the service.
@MainActor
public final class CommandInterpreter {
    public enum Outcome: Sendable, Equatable {
        case success, failure, quit
    }

    public let session: Session
    /// The service, for what it tells about itself (its mounts and types).
    public var service: FileService { session.service }
    /// The session's language.
    public var language: Language {
        get { session.language }
        set { session.language = newValue }
    }
    /// The folder relative paths start from.
    public private(set) var currentFolder: VirtualPath = .root()
    let output: TextOutput
    let errors: TextOutput

    /// Colours for what goes to standard output (folder names); plain by default.
    public var outputStyle = TextStyle.plain
    /// The name errors start with (`coffer:`), the program's.
    public var programName = "coffer"
    /// Colours for what goes to standard error (the `coffer:` of errors); plain by default.
    public var errorStyle = TextStyle.plain
    /// Asked before something that cannot be undone (emptying the trash); `true` goes
    /// ahead. Without it, the command goes ahead (scripts chose by running it).
    public var confirm: ((String) async -> Bool)?
    /// Asks a question and returns the answer typed, `nil` when there was none (Ctrl-C,
    /// Ctrl-D). Without it nobody is asked (a script), and commands take their safe default.
    public var ask: ((String) async -> String?)?

    /// Set by the person's answer to the session's changed-file question when they chose,
    /// and confirmed, to discard their changes; `edit` discards only then.
    var changedFileDiscarded = false
    /// Makes a progress display for a long operation, given its label (“Copying”).
    public var progressBar: (@Sendable (String) -> ProgressBar)?
    /// How standard output shows images, when it is a terminal that can (`preview`).
    public var imageProtocol: ImageProtocol?
    /// Work a command left running (thumbnails of a listing), by number; each removes itself
    /// when done, and ``endBackgroundWork(waiting:)`` ends what is left.
    var backgroundWork: [Int: Task<Void, Never>] = [:]
    var backgroundWorkCount = 0

    /// An interpreter for `session`. Moves, copies, renames and restores given no
    /// `--keep-both` or `--replace` ask the session's ``Session/conflictQuestion`` when the
    /// name is taken, and fail when it has none.
    public init(session: Session, output: TextOutput, errors: TextOutput) {
        self.session = session
        self.output = output
        self.errors = errors
    }

    /// Runs every command of a line (`;` separates commands). Stops at `quit`.
    /// - Returns: `.failure` if any command failed, `.quit` if one asked to leave.
    public func run(line: String) async -> Outcome {
        let commands: [[CommandLineSplitter.Word]]
        do {
            commands = try CommandLineSplitter.scannedCommands(line)
        } catch {
            report(CofferError(.invalidArgument, detail: Self.describe(error, language)))
            return .failure
        }
        var outcome = Outcome.success
        for scanned in commands {
            // Wildcards are expanded when their command comes (an earlier one may have made the names).
            let words: [String]
            do {
                words = try await expandingWildcards(scanned)
            } catch {
                report(error)
                outcome = .failure
                continue
            }
            switch await run(words: words) {
            case .quit: return outcome == .failure ? .failure : .quit
            case .failure: outcome = .failure
            case .success: break
            }
        }
        return outcome
    }

    /// Runs one command given as words.
    public func run(words: [String]) async -> Outcome {
        guard let name = words.first else { return .success }
        defer {
            output.flush()
            errors.flush()
        }
        let reported = await session.reporting { await dispatch(name, words) }
        for warning in reported.warnings { warn(warning.message(language)) }
        return reported.value
    }

    private func dispatch(_ name: String, _ words: [String]) async -> Outcome {
        do {
            let arguments = words.dropFirst()
            switch name {
            case "ls": try await list(arguments)
            case "cd": try await changeFolder(arguments)
            case "pwd": output.line(currentFolder.description)
            case "tree": try await tree(arguments)
            case "mkdir": try await makeFolders(arguments)
            case "mv": try await move(arguments)
            case "rename": try await rename(arguments)
            case "cp": try await copy(arguments)
            case "rm": try await remove(arguments)
            case "touch": try await touch(arguments)
            case "trash": try await listTrash(arguments)
            case "restore": try await restore(arguments)
            case "versions": try await versions(arguments)
            case "changes": try await changes(arguments)
            case "undo": try await undo(arguments)
            case "empty-trash": try await emptyTrash(arguments)
            case "import": try await importItems(arguments)
            case "export": try await exportItem(arguments)
            case "open": try await openInPlace(arguments)
            case "bookmarks": try await listBookmarks(arguments)
            case "cat": try await cat(arguments)
            case "edit": try await edit(arguments)
            case "write": try await write(arguments)
            case "head": try await head(arguments)
            case "info": try await info(arguments)
            case "tag": try await tag(arguments)
            case "tags": try await listTags(arguments)
            case "du": try await diskUsage(arguments)
            case "preview": try await preview(arguments)
            case "fetch": try await fetch(arguments)
            case "download": try await download(arguments)
            case "downloads": try await listDownloads(arguments)
            case "upload": try await upload(arguments)
            case "find": try await find(arguments)
            case "reindex": try await reindex(arguments)
            case "mounts": await showMounts()
            case "fav": try await favourite(arguments)
            case "share": try await share(arguments)
            case "shares": try await listShares(arguments)
            case "unshare": try await unshare(arguments)
            case "open-with": try await openWith(arguments)
            case "recent": try await listRecent(arguments)
            case "help": try help(arguments)
            case "quit", "exit": return .quit
            default:
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "unknown command “\(name)”", "未知命令“\(name)”")(language))
            }
            return .success
        } catch is Reported {
            return .failure
        } catch {
            report(CofferError.wrapping(error))
            return .failure
        }
    }

    /// Performs an operation in the session, made from the user's words.
    func perform<Operation: FileOperation>(
        _ operation: @autoclosure () throws(CofferError) -> Operation, progress label: LocalizedText? = nil
    ) async throws(CofferError) -> Operation.Output {
        let display = label.flatMap { label in progressBar.map { BarDisplay(label: label(language), makeBar: $0) } }
        return try await session.perform(try operation(), progress: display)
    }

    /// Prints an error's message on standard error, after the host path it concerns when
    /// there is one (the path the user typed: host errors carry no virtual path).
    /// Prints what an operation could not do without failing (``OperationWarning``).
    func warn(_ text: String) {
        errors.line("\(errorStyle.error(programName + ":")) \(LocalizedText("warning:", "警告：")(language)) "
                    + (errors.isTerminal ? Formatting.visible(text) : text))
        errors.flush()
    }

    public func report(_ error: CofferError, about hostPath: String? = nil, withHint: Bool = true) {
        let message = error.userMessage(in: language, hints: .repl)
        let subject = hostPath.map { " \($0):" } ?? ""
        // Names in a message are a file's or a server's: on a terminal, their control characters are shown, not obeyed.
        let text = "\(subject) \(withHint ? message.description : message.text)"
        errors.line("\(errorStyle.error(programName + ":"))\(errors.isTerminal ? Formatting.visible(text) : text)")
        errors.flush()
    }

    /// A name or path to print: on a terminal its control characters become visible symbols
    /// (a file named with an escape sequence cannot steer the terminal); to a pipe, as it is,
    /// so that scripts get names exactly.
    func shown(_ text: String) -> String { output.isTerminal ? Formatting.visible(text) : text }

    /// A path as the user typed it, relative to the current folder.
    func resolve(_ text: String) throws(CofferError) -> VirtualPath {
        try VirtualPath(parsing: text, relativeTo: currentFolder)
    }

    /// A command's words, parsed by the syntax `help` documents for it.
    func parse(_ words: ArraySlice<String>, as command: String) throws(CofferError) -> ParsedArguments {
        try ParsedArguments(words, syntax: CommandHelp.named(command)?.syntax ?? CommandSyntax(), language: language)
    }

    func usage(_ command: String) -> CofferError {
        let usage = CommandHelp.named(command)?.usage ?? command
        return CofferError(.invalidArgument, detail: LocalizedText("usage: \(usage)", "用法：\(usage)")(language))
    }

    private static func describe(_ error: CommandLineSplitter.Failure, _ language: Language) -> String {
        switch error {
        case .unterminatedQuote(let quote):
            LocalizedText("a \(quote) quote is not closed", "引号 \(quote) 没有闭合")(language)
        case .danglingBackslash:
            LocalizedText("the line ends with a backslash", "行尾是一个反斜杠")(language)
        }
    }

    func setCurrentFolder(_ path: VirtualPath) { currentFolder = path }
}
