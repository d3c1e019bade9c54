@_spi(Engine) public import CofferCore

/// Deletes one item as its front end means it: a scratch file (a name its front end's
/// ``FrontEndDefaults/scratchNames`` lists: an editor's lock or swap file; or SQLite's journal or
/// write-ahead log beside its database, `ScratchNames.database(ofCompanion:)`) is deleted for good,
/// except an editor's backup `NAME~` beside a file `NAME`, which becomes a version of it (what
/// the file held before the editor saved it anew); anything else goes to the trash, as
/// ``TrashItems`` moves it. What `unlink(2)` and `rmdir(2)`
/// do under `coffer mount`.
///
/// Fails as ``TrashItems`` does for its item: `noSuchFile` when missing, `readOnly` on a
/// read-only mount, `invalidOperation` for a mount's root, `unsupported` on a service without a trash.
public struct DeleteItem: FileOperation {
    public static let name = "delete"
    public static let changesFiles = true

    /// What became of a deleted item.
    public enum Outcome: Sendable {
        /// Moved to the trash, from where it can be restored.
        case trashed(TrashItem)
        /// A scratch file, deleted for good.
        case discarded
        /// An editor's backup (`NAME~`) of the file at the path given, made a version of it.
        case keptAsVersion(VirtualPath)
    }

    /// The item deleted.
    public var path: VirtualPath

    /// Deletes the item at `path`.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> Outcome {
        let service = context.service
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        if let scratch = context.session.defaults.scratchNames, try await isScratch(path, scratch, service) {
            let node = try await service.stat(path)
            // An editor's backup of a file it saved anew (Vim's `notes.txt~`) is what the file
            // held: kept as its version rather than lost.
            if node.kind == .file, node.special == nil, path.name.hasSuffix("~"), path.name.count > 1,
               let saved = try? path.replacingName(with: String(path.name.dropLast())),
               let file = try? await service.stat(saved), file.kind == .file,
               try await service.keepBackup(node, asVersionOf: saved) != nil {
                return .keptAsVersion(saved)
            }
            if node.kind == .file {
                let backend = try service.writableMount(for: path).backend
                let path = path
                try await service.call(path) { try await backend.removeItem(at: path) }
                return .discarded
            }
        }
        return .trashed(try await service.trash([path])[0].get())
    }

    /// Whether the item at `path` is a scratch file: its name is one of `scratch`'s, or it is a
    /// database's companion file (`ScratchNames.database(ofCompanion:)`) with the SQLite database
    /// beside it.
    private func isScratch(_ path: VirtualPath, _ scratch: ScratchNames, _ service: FileService) async throws(CofferError) -> Bool {
        if scratch.contains(path.name) { return true }
        guard let database = ScratchNames.database(ofCompanion: path.name),
              let beside = try? path.replacingName(with: database),
              (try? await service.stat(beside))?.kind == .file, let backend = try? service.mount(for: beside).backend else { return false }
        // Beside a database only: a file that begins as SQLite's do.
        return (try? await service.call(beside) { () async throws -> Bool in
            let file = try await backend.openFile(at: beside)
            let head = try? await file.read(at: 0, upTo: 16)
            await file.close()
            return head == Array("SQLite format 3\0".utf8)
        }) ?? false
    }

    public func auditRecords(for outcome: Result<Outcome, CofferError>) -> [AuditRecord] {
        var record = AuditRecord(paths: [path.description], outcome: outcome)
        if case .success(.discarded) = outcome { record.extra["scratch"] = "deleted" }
        return [record]
    }
}
