import CofferBackends
public import CofferCore

/// Saves text someone typed, piped in or edited — to a file of a mount or to a host file
/// opened in place — in the file's own encoding.
///
/// The text is given as UTF-8. A file that is text in another form (UTF-16, GB 18030, UTF-8
/// with a byte-order mark) is written in that form, a byte-order mark of the input dropped;
/// a new file, a UTF-8 file and one that is not text are written the text as it is, and so
/// is input that is not UTF-8 (it cannot be converted, so it is not guessed at). A character
/// the file's encoding cannot hold is refused (`notEncodable`), never replaced.
///
/// Every front end saves text this way (the REPL's `write`, MCP's `edit_file`), so the
/// rules for a name already taken and for a file that changed are the session's:
/// `ifVersion` makes the save conditional (`changedSinceRead` when the file moved on);
/// otherwise `conflict` decides as it does for ``WriteFile``, and for a host file
/// ``SaveText/hostSaveMode(conflict:ifVersion:)`` does.
public struct SaveText: FileOperation {
    public static let name = "write"
    public static let changesFiles = true

    /// Where the text went, and in which form.
    public enum Saved: Sendable {
        /// A file of a mount, as it is now.
        case file(FileNode, form: TextForm)
        /// A host file opened in place (its bookmark follows it).
        case host(HostSaveResult, form: TextForm)

        /// The form the text was written in.
        public var form: TextForm {
            switch self {
            case .file(_, let form), .host(_, let form): form
            }
        }
    }

    /// A file of a mount, or a host file opened in place.
    public var target: EditTarget
    /// The text, as UTF-8 (or bytes that are not, written as they are).
    public var text: [UInt8]
    /// As the request gave it; `nil` for the front end's default.
    public var conflict: ConflictChoice?
    /// Save only while the file is at this version.
    public var ifVersion: FileVersion?
    /// Add the text at the file's end (files of a mount only).
    public var appending: Bool

    /// Saves `text` to `target`.
    public init(_ target: EditTarget, text: [UInt8], conflict: ConflictChoice? = nil, ifVersion: FileVersion? = nil,
                appending: Bool = false) {
        (self.target, self.text, self.conflict, self.ifVersion, self.appending) = (target, text, conflict, ifVersion, appending)
    }

    public func run(in context: OperationContext) async throws(CofferError) -> Saved {
        if case .bookmark = target, appending {
            throw CofferError(.invalidArgument, detail: "appending is for files of a mount, not host files")
        }
        // Input that is not UTF-8 cannot be converted: it is written as it is.
        let form = String(validating: text, as: UTF8.self) == nil ? nil
            : try await context.service.textForm(of: target, policy: context.session.hostPolicy)
        let bytes = try form.map { form throws(CofferError) in
            // A byte-order mark in the input is the file's to have, once.
            let body = text.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(text.dropFirst(3)) : text
            return try form.encode(utf8: body, path: target.path, continuing: appending)
        } ?? text
        let written = form ?? .utf8
        switch target {
        case .file(let path):
            if appending {
                return .file(try await AppendToFile(path, bytes: bytes, ifVersion: ifVersion).run(in: context), form: written)
            }
            return .file(try await WriteFile(path, bytes: bytes, conflict: conflict, ifVersion: ifVersion).run(in: context), form: written)
        case .bookmark(let id):
            return .host(try await WriteHostFile(bookmark: id, bytes: bytes, conflict: conflict, ifVersion: ifVersion).run(in: context), form: written)
        }
    }

    /// How a save through a bookmark places the text for a request's choices, as
    /// ``WriteFile`` decides for a file of a mount: in the file's place only while it is at
    /// `ifVersion` when one is given (the conflict choice is then not consulted); beside it
    /// for `keepBoth`; in its place otherwise. A host file is never asked about: it is the
    /// file the user opened.
    public static func hostSaveMode(conflict: ConflictChoice?, ifVersion: FileVersion?) -> HostSaveMode {
        if ifVersion == nil, conflict == .keepBoth { return .keepBoth }
        return .replace(ifVersion: ifVersion)
    }

    public func auditedPaths(for outcome: Result<Saved, CofferError>) -> [String] {
        switch (target, outcome) {
        case (.file, .success(.file(let node, _))): [node.path.description]
        default: [target.description]
        }
    }
}

extension FileService {
    /// The form text written to `target` keeps: the file's own when it is text in another
    /// form than plain UTF-8; `nil` (the text as it is) for a UTF-8 file, a new or empty
    /// one, and one that is not text.
    func textForm(of target: EditTarget, policy: HostAccessPolicy) async throws(CofferError) -> TextForm? {
        let head: ByteRange
        do {
            switch target {
            case .file(let path): head = try await readBytes(path, length: TextReader.sampleSize)
            case .bookmark(let id): head = try await readBookmark(id, offset: 0, length: TextReader.sampleSize, policy: policy)
            }
        } catch where error.kind == .noSuchFile && target.path != nil {
            return nil
        }
        guard !head.bytes.isEmpty, let form = TextForm(of: head.bytes, isComplete: head.isEndOfFile), form != .utf8 else {
            return nil
        }
        return form
    }
}
