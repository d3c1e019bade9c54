public import CofferCore

/// Makes the private copy of a file for an editor program (``EditDraft``): UTF-8, in the
/// container's `tmp/`, under the file's own name. A file of a mount that does not exist yet
/// gives an empty copy; finishing the edit (``FinishEdit``) creates it.
///
/// Fails with `unsupported` (detail `not-text`) for a file that is not text, and on a
/// service that keeps no drafts (``HostSettings/draftsPath``); `tooLarge` for a file larger
/// than ``FileService/editLimit``; `isADirectory` for a folder; `noSuchFile` for a new
/// file whose folder is missing; `readOnly` on a read-only mount; and for a host file, as
/// its bookmark is reached (`staleBookmark`, `hostAccessDenied`).
public struct BeginEdit: FileOperation {
    public static let name = "edit"

    /// The file to edit.
    public var target: EditTarget

    /// Makes the private copy of `target`.
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

    /// The copy ``BeginEdit`` made.
    public var draft: EditDraft
    /// What to do with it.
    public var choice: EditChoice

    /// Saves or discards `draft` as `choice` says.
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

/// Writes a whole host file opened in place, through its bookmark (`HostBookmark`'s
/// `save`): only while it is at the version `mode` names when it names one, keeping its
/// mode, owner, attributes and ACL, the bookmark following it. What it replaces goes to the
/// desktop's trash.
///
/// Fails with `changedSinceRead` when the file moved on from the version named (and the
/// session was not asked, or no answer came), `staleBookmark` when the file was deleted or
/// replaced, `noSuchFile` for an unknown bookmark, and `hostAccessDenied` when the
/// session's host access does not reach the file. The audit entry names the bookmark,
/// never the host path.
public struct WriteHostFile: FileOperation {
    public static let name = "write"
    public static let changesFiles = true

    /// The bookmark of the file, as ``OpenHostFile`` made it.
    public var bookmarkID: Int
    /// The file's whole new content.
    public var bytes: [UInt8]
    /// How the content is placed: over the file (conditionally on a version, or not), or
    /// beside it under a new name.
    public var mode: HostSaveMode
    /// Whether a conditional save whose file changed asks the session what to do.
    public var asksIfChanged: Bool

    /// A request that asked not to overwrite (`fail`, or `ask` with nothing to compare):
    /// refused, since the host file is always there.
    var refusesOverwriting = false

    /// Writes `bytes` to the file of bookmark `bookmarkID` as `mode` says.
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
///
/// Fails with `noSuchFile` for an unknown bookmark, `staleBookmark` when the file was
/// deleted or replaced, `hostAccessDenied` when the session's host access does not reach
/// it, and, as text, `unsupported` (detail `not-text`) for a file that is not text.
public struct ReadBookmark: FileOperation {
    public static let name = "read"

    /// The bookmark of the file, as ``OpenHostFile`` made it.
    public var bookmarkID: Int
    /// The first byte read.
    public var offset: Int64
    /// The most bytes read.
    public var length: Int
    /// As bytes, or as text.
    public var form: ReadRange.Form

    /// Reads up to `length` bytes of bookmark `bookmarkID`'s file from `offset`, in `form`.
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
