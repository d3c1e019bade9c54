public import CofferCore

/// Where an item that is moved or copied lands.
public enum Destination: Sendable, Hashable {
    /// Inside this folder, under the item's own name; the folder must exist. (RPC's
    /// `toDirectory`, and the shell's several sources into one folder.)
    case into(VirtualPath)
    /// As a shell user names it: inside `target` when that is an existing folder, else at
    /// `target` itself (`cp a.txt b.txt` copies to `b.txt`, `cp a.txt Docs` into `Docs`).
    case named(VirtualPath)
    /// At `target` itself, even when that is an existing folder: the conflict policy decides
    /// what becomes of whatever is there. (MCP's `move_file` and `copy_file`, whose
    /// `destination` is the new path.)
    case exactly(VirtualPath)

    /// The destination a person named `target` by typing `text`: a trailing `/` means "into
    /// this folder", which must then exist (GNU `cp` and `mv`, and sftp, read it so), else as
    /// the shell names it (``named(_:)``).
    public static func named(_ target: VirtualPath, typed text: String) -> Destination {
        text.hasSuffix("/") ? .into(target) : .named(target)
    }

    /// ``exactly(_:)``, but for a `text` ending in `/`, which means "into this folder" whoever reads it.
    public static func exactly(_ target: VirtualPath, typed text: String) -> Destination {
        text.hasSuffix("/") ? .into(target) : .exactly(target)
    }

    /// The path the user named: the folder, or the target.
    public var requested: VirtualPath {
        switch self {
        case .into(let folder): folder
        case .named(let target), .exactly(let target): target
        }
    }

    /// What the audit log records of `source` sent here: the source, and where it landed —
    /// or, when it did not, the path as the user named it.
    func auditedPaths(from source: VirtualPath, _ outcome: Result<FileNode, CofferError>) -> [String] {
        [source.description, ((try? outcome.get())?.path ?? requested).description]
    }

    /// Checks that an ``into(_:)`` destination is a folder (or a package), once for several
    /// sources going there; a ``named(_:)`` one needs no check.
    /// - Throws: `noSuchFile` when it does not exist, `notADirectory` when it is a file.
    public func check(in service: FileService) async throws(CofferError) {
        guard case .into(let folder) = self else { return }
        guard try await service.stat(folder).kind != .file else { throw CofferError(.notADirectory, path: folder) }
    }

    /// Where `source` lands.
    /// - Throws: as ``check(in:)``; `invalidOperation` for a mount's root as the source of
    ///   a transfer into a folder.
    func resolve(for source: VirtualPath, in service: FileService) async throws(CofferError) -> VirtualPath {
        switch self {
        case .into(let folder):
            try await check(in: service)
            guard !source.isRoot else { throw CofferError(.invalidOperation, path: source) }
            return folder.appending(trustedName: source.name)
        case .named(let target):
            guard let node = try? await service.stat(target), node.kind == .folder else { return target }
            guard !source.isRoot else { throw CofferError(.invalidOperation, path: source) }
            return target.appending(trustedName: source.name)
        case .exactly(let target):
            return target
        }
    }
}
