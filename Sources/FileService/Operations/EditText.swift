public import CofferCore

/// Makes the private copy of a file for an editor program (``FileService`` `beginEdit`):
/// UTF-8, in `tmp/`, under the file's own name. A file that does not exist yet gives an
/// empty copy; finishing the edit creates it.
public struct BeginEdit: FileOperation {
    public static let name = "edit"

    public var target: EditTarget

    public init(_ target: EditTarget) { self.target = target }

    public func run(in context: OperationContext) async throws(CofferError) -> EditDraft {
        try await context.service.beginEdit(target, policy: context.session.hostPolicy)
    }
}

/// Saves an edited copy as `choice` says — by default over the version that was copied — or
/// throws it away. When the file changed meanwhile, the session asks what to do
/// (``Session/changedFileQuestion``: overwrite, keep both, keep in `files:/Recovered`, or
/// cancel); without anyone to ask, or cancelled, it is refused with `changedSinceRead`.
/// An editor that changed nothing saves nothing. The copy stays when saving fails, for
/// another choice.
public struct FinishEdit: FileOperation {
    public static let name = "edit"
    public static let changesFiles = true

    public var draft: EditDraft
    public var choice: EditChoice

    public init(_ draft: EditDraft, choice: EditChoice = .save) {
        self.draft = draft
        self.choice = choice
    }

    public func run(in context: OperationContext) async throws(CofferError) -> EditOutcome {
        let (service, policy) = (context.service, context.session.hostPolicy)
        let outcome = try await context.settlingChange(asking: choice == .save) { answer throws(CofferError) in
            try await service.finishEdit(draft, choice: answer.map(EditChoice.init) ?? choice, policy: policy)
        }
        if case .saved(let location, _) = outcome {
            if location.hasPrefix("/") {
                await context.service.noteUse(.host(location))
            } else if let path = try? VirtualPath(parsing: location) {
                await context.service.noteUse(.item(path))
            }
        }
        return outcome
    }

    public func auditedPaths(for outcome: Result<EditOutcome, CofferError>) -> [String] {
        if case .success(.saved(let location, _)) = outcome, location.contains(":/") { return [location] }
        return [draft.target.description]
    }
}

/// Writes a whole host file opened in place, through its bookmark
/// (``HostBookmark/save(_:mode:policy:trash:)``): only while it is at `ifVersion` when one
/// is given, keeping its mode, owner, attributes and ACL, the bookmark following it.
public struct WriteHostFile: FileOperation {
    public static let name = "write"
    public static let changesFiles = true

    public var bookmarkID: Int
    public var bytes: [UInt8]
    public var mode: HostSaveMode
    /// Whether a conditional save whose file changed asks the session what to do.
    public var asksIfChanged: Bool

    /// A request that asked not to overwrite (`fail`, or `ask` with nothing to compare):
    /// refused, since the host file is always there.
    var refusesOverwriting = false

    public init(bookmark bookmarkID: Int, bytes: [UInt8], mode: HostSaveMode, asksIfChanged: Bool = false) {
        self.bookmarkID = bookmarkID
        self.bytes = bytes
        self.mode = mode
        self.asksIfChanged = asksIfChanged
    }

    /// A save as a request's choices ask, decided as for every front end
    /// (``SaveText/hostSaveMode(conflict:ifVersion:)``); with `ifVersion` and `.ask`, a file
    /// that changed meanwhile is asked about (overwrite, keep both or cancel: the host file is
    /// the one the user opened, and a copy kept aside would be a file of `files:`). Without
    /// `ifVersion`, `fail` and `ask` are refused (`invalidArgument`): the host file is always
    /// there, so they could only overwrite it unasked or fail every time.
    public init(bookmark bookmarkID: Int, bytes: [UInt8], conflict: ConflictChoice?, ifVersion: FileVersion?) {
        self.init(bookmark: bookmarkID, bytes: bytes, mode: SaveText.hostSaveMode(conflict: conflict, ifVersion: ifVersion),
                  asksIfChanged: ifVersion != nil && conflict == .ask)
        refusesOverwriting = ifVersion == nil && (conflict == .ask || conflict == .fail)
    }

    public func run(in context: OperationContext) async throws(CofferError) -> HostSaveResult {
        if refusesOverwriting {
            throw CofferError(.invalidArgument, detail: "a host file opened in place is always there: save it with "
                + "ifVersion (asked about if it changed since), or with conflict replace or keepBoth")
        }
        let (service, policy, bytes, id, mode) = (context.service, context.session.hostPolicy, bytes, bookmarkID, mode)
        return try await context.settlingChange(asking: asksIfChanged, choices: [.overwrite, .keepBoth]) { answer throws(CofferError) in
            let chosen: HostSaveMode = switch answer {
            case nil, .keepInRecovered?: mode
            case .overwrite?: .replace(ifVersion: nil)
            case .keepBoth?: .keepBoth
            }
            return try await service.saveHostFile(id, bytes: bytes, mode: chosen, policy: policy)
        }
    }

    public func auditedPaths(for outcome: Result<HostSaveResult, CofferError>) -> [String] { ["bookmark:\(bookmarkID)"] }
}

/// Up to `length` bytes of a host file opened in place, from `offset`, as they are or as
/// text (as ``ReadRange`` reads a sandbox file), with its version.
public struct ReadBookmark: FileOperation {
    public static let name = "read"

    public var bookmarkID: Int
    public var offset: Int64
    public var length: Int
    public var form: ReadRange.Form

    public init(bookmark bookmarkID: Int, offset: Int64 = 0, length: Int, as form: ReadRange.Form) {
        (self.bookmarkID, self.offset, self.length, self.form) = (bookmarkID, offset, length, form)
    }

    public func run(in context: OperationContext) async throws(CofferError) -> ReadRange.Content {
        let service = context.service, policy = context.session.hostPolicy
        switch form {
        case .bytes: return .bytes(try await service.readBookmark(bookmarkID, offset: offset, length: length, policy: policy))
        case .text: return .text(try await service.readBookmarkText(bookmarkID, offset: offset, length: length, policy: policy))
        }
    }
}

extension EditChoice {
    /// The choice an answer to the changed-file question makes.
    init(_ answer: ChangedFileChoice) {
        switch answer {
        case .overwrite: self = .overwrite
        case .keepBoth: self = .keepBoth
        case .keepInRecovered: self = .keepInFiles
        }
    }
}
