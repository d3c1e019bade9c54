import CofferBackends
public import CofferCore
import Synchronization

/// One front end's connection to a ``FileService``: the REPL a person types into, one
/// JSON-RPC client, a script run with `-c`.
///
/// A front end opens a session (``FileService/openSession(_:)``), performs operations in
/// it, and closes it. The session owns what every front end would otherwise do by hand:
/// - **the audit entry** of every operation that changes something, the same whichever
///   front end asked (only the `frontEnd` field says who);
/// - **housekeeping**: while a long-lived session is open the search index is kept live
///   and abandoned uploads are swept; closing it discards the uploads it left open and
///   stops its watches;
/// - **cancellation**: work started in the session (``start(_:_:)``) can be cancelled by
///   key, and closing cancels whatever is still running;
/// - **its settings**: its language, its host access, and who answers a conflict question.
public final class Session: Sendable {
    /// The service the session is open on.
    public let service: FileService
    /// Who is asking, as the audit log records it.
    public let frontEnd: String
    /// Where the visitor asks from, as the audit log records it (``SessionOptions/client``).
    public let client: String?
    /// The share link a visitor came by (``SessionOptions/share``).
    public let share: String?
    /// This session's number among the service's, from 1.
    public let number: Int
    /// This session's identifier, unique among every process's sessions (8 hexadecimal
    /// digits): what the versions its changes kept record as their author.
    public let id: String
    /// The host folders the session may use (canonical paths), or `nil` for anywhere the
    /// account can read. The container is never among them.
    public var allowedHostFolders: [String]? { hostPolicy.allowedFolders }
    /// The host access the session was opened with, resolved, and any folders allowed since.
    var hostPolicy: HostAccessPolicy { state.withLock { $0.hostPolicy } }
    let isLongLived: Bool
    /// What this session's requests mean when they leave a choice out.
    public let defaults: FrontEndDefaults
    let activities = SessionActivities()
    let watches = SessionWatches()

    private struct State {
        var language: Language
        var conflictQuestion: ConflictQuestion?
        var changedFileQuestion: ChangedFileQuestion?
        /// What the session was opened with, and that with the folders its client offers.
        let openedPolicy: HostAccessPolicy
        var hostPolicy: HostAccessPolicy
        var closed = false
    }
    private let state: Mutex<State>

    init(service: FileService, options: SessionOptions, number: Int, hostPolicy: HostAccessPolicy) {
        self.service = service
        self.frontEnd = options.frontEnd
        self.client = options.client
        self.share = options.share
        self.number = number
        self.id = Self.makeID()
        self.isLongLived = options.isLongLived
        self.defaults = options.defaults
        self.state = Mutex(State(language: options.language, openedPolicy: hostPolicy, hostPolicy: hostPolicy))
    }

    /// Lets the session use these host folders as well as those it was opened with, from
    /// now on: the folders its client offers while it runs (an MCP client's roots), each
    /// call replacing the last one's. The container stays out of reach, however a folder
    /// names it; a session allowed anywhere stays so.
    /// - Throws: `noSuchFile` or `notADirectory` for a folder that does not exist or is not a
    ///   folder; nothing changes then.
    public func offerHostFolders(_ folders: [String]) throws(CofferError) {
        try state.withLock { (state: inout State) throws(CofferError) in
            state.hostPolicy = try state.openedPolicy.adding(folders)
        }
    }

    /// The language of the session's messages.
    public var language: Language {
        get { state.withLock { $0.language } }
        set { state.withLock { $0.language = newValue } }
    }

    /// Who answers when an operation asked to ``ConflictChoice/ask`` finds its name taken:
    /// a person at a terminal. Without one, such an operation fails with `fileExists`.
    public var conflictQuestion: ConflictQuestion? {
        get { state.withLock { $0.conflictQuestion } }
        set { state.withLock { $0.conflictQuestion = newValue } }
    }

    /// Who answers when a save that may ask finds its file changed since it was read
    /// (``ChangedFileChoice``): a person at a terminal, or behind a JSON-RPC client. Without
    /// one, such a save fails with `changedSinceRead`.
    public var changedFileQuestion: ChangedFileQuestion? {
        get { state.withLock { $0.changedFileQuestion } }
        set { state.withLock { $0.changedFileQuestion = newValue } }
    }

    // MARK: Operations

    /// Performs `operation` and records it in the audit log when it may change something —
    /// also when it fails, and when the operation could not even be made (a path that does
    /// not parse: then the entry names no path).
    ///
    /// The operation is made on the caller's actor (`nonisolated(nonsending)`); it runs
    /// wherever its `run` does.
    ///
    /// - Parameters:
    ///   - operation: The operation, made here: a path that does not parse throws from
    ///     here, and is still audited.
    ///   - progress: Where the operation's progress is shown, if anywhere.
    /// - Returns: The operation's output.
    /// - Throws: What making or running the operation threw, always a `CofferError`: its
    ///   kind says what went wrong (each operation names the kinds it throws).
    public nonisolated(nonsending) func perform<Operation: FileOperation>(
        _ operation: @autoclosure () throws(CofferError) -> Operation, progress: (any ProgressDisplay)? = nil
    ) async throws(CofferError) -> Operation.Output {
        let made: Operation
        do {
            made = try operation()
        } catch {
            recordUnmade(Operation.self, because: error)
            throw error
        }
        let context = OperationContext(session: self, progress: progress)
        guard Operation.isAudited else { return try await made.run(in: context) }
        let replaced = ReplacedItems(author: ChangeAuthor(session: id, frontEnd: frontEnd))
        let outcome: Result<Operation.Output, CofferError> = await ReplacedItems.$current.withValue(replaced) {
            do throws(CofferError) {
                return .success(try await made.run(in: context))
            } catch {
                return .failure(error)
            }
        }
        var records = made.auditRecords(for: outcome)
        let trashed = replaced.trashed, versions = replaced.versions
        if !trashed.isEmpty, !records.isEmpty {
            // What the replaces moved to the trash, on the first record: one line names it all.
            records[0].trashed = trashed
        }
        if !versions.isEmpty, !records.isEmpty {
            records[0].extra["versions"] = versions.map(String.init).joined(separator: ",")
        }
        record(Operation.self, records)
        // What it changed, journaled for undoing the session (best effort: a journal that
        // cannot be written never fails the operation that already happened).
        if let store = service.feature(VersionStore.self) {
            try? await store.record(replaced.changes, session: id, frontEnd: frontEnd)
        }
        return try outcome.get()
    }

    /// Performs a read at once, on the caller's thread, where its mount allows
    /// (``ImmediateOperation``); `nil` where it would have to wait, for ``perform(_:progress:)``.
    /// Only reads qualify: nothing is audited, and nothing is left to cancel.
    public func performImmediately<Operation: ImmediateOperation>(_ operation: Operation) throws(CofferError) -> Operation.Output? {
        guard !Operation.isAudited else { return nil }
        return try operation.runImmediately(in: service)
    }

    /// Records that an operation could not even be made from a request — a path that does
    /// not parse, say — as a failed one, with no path, when the operation changes things.
    /// ``perform(_:progress:)`` does this when making the operation throws; a front end that
    /// reads several paths before it can make any operation calls it itself.
    public func recordUnmade<Operation: FileOperation>(_ operation: Operation.Type, because error: CofferError) {
        if Operation.isAudited { record(operation, [AuditRecord(paths: [], outcome: error.kind.identifier)]) }
    }

    private func record<Operation: FileOperation>(_ operation: Operation.Type, _ records: [AuditRecord]) {
        guard let audit = service.audit else { return }
        for record in records {
            var extra = record.extra
            if let client { extra["client"] = client }
            if let share { extra["share"] = share }
            audit.record(frontEnd: frontEnd, method: Operation.name, paths: record.paths, outcome: record.outcome,
                         trashed: record.trashed, extra: extra)
        }
    }

    // MARK: Activities

    /// Starts `work` as a task of this session, under `key` when one is given so that
    /// ``cancel(_:)`` can stop it. Closing the session cancels it if it is still running.
    @discardableResult
    public func start<T: Sendable>(_ key: ActivityKey? = nil,
                                   _ work: @escaping @Sendable () async -> T) -> Task<T, Never> {
        activities.start(key, work)
    }

    /// Starts `work` as a task of this session, as ``start(_:_:)`` does, with `executor` running
    /// its jobs: a `WaitingThreadExecutor` (CofferRuntime) runs them on the thread that waits for the answer.
    @discardableResult
    public func start<T: Sendable>(on executor: any TaskExecutor, _ work: @escaping @Sendable () async -> T) -> Task<T, Never> {
        activities.start(nil, on: executor, work)
    }

    /// Cancels the running work started under `key`; the service turns that into a clean
    /// stop (`cancelled`, nothing half-done).
    public func cancel(_ key: ActivityKey) { activities.cancel(key) }

    /// Cancels all the work running now.
    public func cancelAll() { activities.cancelAll() }

    /// Cancels all the work running now and everything started from now on: for when
    /// nobody is left to answer (a client gone, a server stopping).
    public func stopWork() { activities.cancelAll(closing: true) }

    /// Something that waits for the work running now to end, not for work started later:
    /// take it before starting work that must come after (JSON-RPC's `shutdown` is
    /// answered after the requests read before it).
    public func untilRunningWorkEnds() -> @Sendable () async -> Void { activities.waiterForRunning() }

    /// Waits until no work of the session is running.
    public func waitForAllWork() async { await activities.waitForAll() }

    // MARK: Watching

    /// Reports changes below the folder at `path` (in every subfolder unless `recursive` is
    /// false), or to the file at `path`, including changes made by other programs, until
    /// ``unwatch(_:)`` or the end of the session. `onChange` gets the watch's id and batches
    /// coalesced over about 100 ms; moves arrive as `deleted` at the old path and `created`
    /// at the new one.
    /// - Returns: the watch's id (`w1`, `w2`…, per session).
    /// - Throws: `unsupported` (detail `watch`) on a mount whose storage cannot be watched;
    ///   `unknownMount` for a mount the service does not have; what the storage throws when
    ///   the path cannot be watched (`noSuchFile` when nothing is there).
    public func watch(_ path: VirtualPath, recursive: Bool = true,
                      onChange: @escaping @Sendable (_ id: String, [FileChange]) -> Void) async throws(CofferError) -> String {
        let id = watches.reserveID()
        let watch = try await service.watch(path, recursive: recursive) { changes in onChange(id, changes) }
        watches.keep(watch, as: id)
        return id
    }

    /// Stops a watch; no change is reported for it afterwards. `false` when there is none.
    public func unwatch(_ id: String) -> Bool { watches.remove(id) }

    // MARK: Reading text

    /// Runs `body` with the file at `path` read as text, a chunk at a time, in its detected
    /// encoding (UTF-8, UTF-16 with a byte-order mark, or GB 18030). `body` runs on the
    /// caller's actor.
    /// - Throws: `unsupported` (detail `not-text`) for a file that is none of them, before
    ///   `body` runs; whatever `body` throws, as a `CofferError`.
    public nonisolated(nonsending) func withText<T>(
        of path: VirtualPath, _ body: (TextReader) async throws -> T
    ) async throws(CofferError) -> T {
        let reader = try await service.openText(path)
        do {
            return try await body(reader)
        } catch {
            throw CofferError.wrapping(error, path: path)
        }
    }

    /// Runs `body` with version `id` of the file at `path` read as text, as
    /// ``withText(of:_:)`` reads the file.
    /// - Throws: `noSuchFile` (detail `no-version`) when the file has no such version.
    public nonisolated(nonsending) func withText<T>(
        ofVersion id: Int, of path: VirtualPath, _ body: (TextReader) async throws -> T
    ) async throws(CofferError) -> T {
        let file = try await service.openVersion(id, of: path)
        do {
            let reader = try await TextReader(path: path) { try await file.read(upTo: 1 << 20) }
            let result = try await body(reader)
            await file.close()
            return result
        } catch {
            await file.close()
            throw CofferError.wrapping(error, path: path)
        }
    }

    // MARK: Files opened in place

    /// Runs `body` with access to a bookmarked host file, ended when `body` returns or
    /// throws (start and stop are paired by construction, seed 003 §2.2). `body` runs on
    /// the caller's actor.
    /// - Throws: `staleBookmark` when the file was deleted or replaced, `noSuchFile` for an
    ///   unknown bookmark; whatever `body` throws, as a `CofferError`.
    public nonisolated(nonsending) func withAccess<T>(
        to bookmarkID: Int, _ body: (any HostFileReading) async throws -> T
    ) async throws(CofferError) -> T {
        try await service.withAccess(to: bookmarkID, policy: hostPolicy, body)
    }

    /// Runs `body` with a bookmarked host file read as text, in its detected encoding.
    public nonisolated(nonsending) func withText<T>(
        ofBookmark bookmarkID: Int, _ body: (TextReader) async throws -> T
    ) async throws(CofferError) -> T {
        try await service.withText(ofBookmark: bookmarkID, policy: hostPolicy, body)
    }

    // MARK: Closing

    /// Ends the session: cancels its running work and waits for it to stop (nothing
    /// half-done is left), stops its watches, discards the uploads it left open, and lets
    /// the service's background work stop if no one else needs it. Later calls do nothing.
    public func close() async {
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        stopWork()
        await activities.waitForAll()
        watches.closeAll()
        await service.abortUploads(idleFor: nil, ownedBy: number)
        if isLongLived { await service.releaseBackgroundWork() }
    }
}

extension Session {
    /// A new session identifier: 8 random hexadecimal digits.
    static func makeID() -> String {
        let digits = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

extension FileService {
    /// Opens a session for a front end. A long-lived one keeps the service's background
    /// work going until it closes.
    /// - Throws: `noSuchFile` or `notADirectory` for a folder of `HostAccess.only(_:)` that
    ///   does not exist or is not a folder.
    public func openSession(_ options: SessionOptions) throws(CofferError) -> Session {
        var policy: HostAccessPolicy = switch options.hostAccess {
        case .anywhere: .anywhere
        case .nowhere: .nowhere
        case .only(let folders): try .only(folders)
        }
        for folder in excludedHostFolders { policy = policy.excluding(folder) }
        let number = sessionNumbers.add(1, ordering: .relaxed).newValue
        let session = Session(service: self, options: options, number: number, hostPolicy: policy)
        if options.isLongLived { retainBackgroundWork() }
        return session
    }
}
