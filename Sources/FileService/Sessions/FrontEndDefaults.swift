public import CofferCore

/// What a front end means when a request leaves a choice out — one table for every front end,
/// read by the operations through their session, so that no front end picks a default of its
/// own (`Documentation/Contributor/Front-end defaults.md` shows it whole).
///
/// An operation asked with no conflict choice takes its front end's entry here, else its own
/// `defaultConflict`.
public struct FrontEndDefaults: Sendable {
    /// The conflict choice per operation, by its audit name (`copy`, `write`…), where the front
    /// end means something other than the operation's own default.
    public var conflicts: [String: ConflictChoice]
    /// How many items a listing returns when the request does not say; `nil` for all.
    public var listPageSize: Int?
    /// How many matches a search returns when the request does not say; `nil` for all.
    public var searchLimit: Int?
    /// The most items a ``WalkTree`` meets when it does not say; `nil` for no limit.
    public var walkLimit: Int?
    /// The most bytes one message carries inline: a read's answer, a write's content, a
    /// thumbnail (larger ones go in ranges or through uploads).
    public var inlineBytes: Int
    /// The names of scratch files that ``DeleteItem`` deletes for good instead of moving to
    /// the trash; `nil` for none (every deleted item goes to the trash).
    public var scratchNames: ScratchNames?

    /// Defaults as given; those left out are every operation's own: no page size, no
    /// search or walk limit, 8 MiB inline, no scratch files (set ``scratchNames`` after).
    public init(conflicts: [String: ConflictChoice] = [:], listPageSize: Int? = nil, searchLimit: Int? = nil,
                walkLimit: Int? = nil, inlineBytes: Int = 8 << 20) {
        self.conflicts = conflicts
        self.listPageSize = listPageSize
        self.searchLimit = searchLimit
        self.walkLimit = walkLimit
        self.inlineBytes = inlineBytes
    }

    /// The REPL: a person at a terminal is asked, saying what is there; a script, with no one to
    /// ask, fails as `fail` does. Import and export keep both. Listings, searches and trees are
    /// shown whole (the terminal scrolls; `find --limit` narrows).
    public static let repl = FrontEndDefaults(conflicts: ["copy": .ask, "move": .ask, "rename": .ask, "restore": .ask])
    /// `coffer rpc`: each operation's own default — a copy keeps both, a move, rename, restore,
    /// write or upload fails, an import or export keeps both; pages of 1,000 items, 100 matches.
    public static let rpc = FrontEndDefaults(listPageSize: 1000, searchLimit: 100)
    /// The web page over its WebSocket: a person is asked, as at the REPL — by the page, when it
    /// said in `initialize` that it answers `conflict/ask`; a client that did not fails as `fail`
    /// does. Pages of 500 rows, 200 matches.
    public static let web = FrontEndDefaults(
        conflicts: ["copy": .ask, "move": .ask, "rename": .ask, "restore": .ask, "beginUpload": .ask],
        listPageSize: 500, searchLimit: 200)
    /// `coffer mcp`, as the reference filesystem server behaves: a copy fails on a taken name
    /// like a move, and `write_file` replaces (what it replaces goes to the trash). A tree or a
    /// search walks at most 20,000 items and says when it stopped.
    public static let mcp = FrontEndDefaults(conflicts: ["copy": .fail, "write": .replace], searchLimit: 100,
                                             walkLimit: 20_000)
    /// A share link's visitor (`coffer serve`'s `/s/ID`): what a drop box receives is kept
    /// beside a name taken (`report (2).pdf`), never over it, and nobody is asked — the one
    /// who shared it is not there. A folder share's listing is shown whole.
    public static let share = FrontEndDefaults(conflicts: ["beginUpload": .policy(.keepBoth)])
    /// WebDAV (`coffer serve`'s `/dav/`): each request says what a taken name gets (a `PUT`
    /// replaces, `Overwrite` decides a `COPY` or `MOVE`), so the row holds no conflict choice;
    /// a folder is listed whole, streamed to the client.
    public static let dav = FrontEndDefaults()
    /// `coffer mount`, as POSIX calls mean it: a `rename(2)` onto a taken name replaces it
    /// (what it replaces is kept as a version), a folder is listed whole, and editors' scratch
    /// files (`ScratchNames.standard`) are deleted for good rather than to the trash.
    public static let mount: FrontEndDefaults = {
        var row = FrontEndDefaults(conflicts: ["move": .policy(.replace), "rename": .policy(.replace)])
        row.scratchNames = try? ScratchNames()
        return row
    }()

    /// The table's row for the front end named `frontEnd` (`repl`, `rpc`, `web`, `mcp`, `share`, `dav`, `mount`); another
    /// front end — an application's own — gets `rpc`'s.
    public static func standard(for frontEnd: String) -> FrontEndDefaults {
        switch frontEnd {
        case "repl": .repl
        case "web": .web
        case "mcp": .mcp
        case "share": .share
        case "dav": .dav
        case "mount": .mount
        default: .rpc
        }
    }
}

extension OperationContext {
    /// The conflict choice an operation of type `Operation` runs with: the one its request
    /// gave, else its front end's, else the operation's own.
    public func conflict<Operation: FileOperation>(_ given: ConflictChoice?, for _: Operation.Type,
                                                  otherwise fallback: ConflictChoice) -> ConflictChoice {
        given ?? session.defaults.conflicts[Operation.name] ?? fallback
    }

    /// The same for an operation that cannot ask (an import, an export, an upload): a front
    /// end's `ask` falls back to the operation's own policy.
    public func conflictPolicy<Operation: FileOperation>(_ given: ConflictPolicy?, for _: Operation.Type,
                                                        otherwise fallback: ConflictPolicy) -> ConflictPolicy {
        if let given { return given }
        if case .policy(let policy)? = session.defaults.conflicts[Operation.name] { return policy }
        return fallback
    }
}
