public import CofferCore

/// Writes a whole file from bytes in memory; it appears only when complete.
///
/// Default: a name already taken makes it fail. The audit entry names where the file was
/// written.
///
/// Fails with `fileExists` for a taken name under `fail` (or `ask` with no one to ask),
/// `changedSinceRead` when ``ifVersion`` is given and the file is at another version or
/// gone, `isADirectory` for a mount's root, `noSuchFile` or `notADirectory` naming the
/// folder on the way that is missing or is a file, and `readOnly` on a read-only mount.
/// What a replace displaces goes to the trash.
public struct WriteFile: FileOperation {
    public static let name = "write"
    public static let changesFiles = true
    /// What a name already taken gets when the caller does not choose.
    public static let defaultConflict: ConflictChoice = .fail

    /// Where the file is written.
    public var path: VirtualPath
    /// Its whole content.
    public var bytes: [UInt8]
    /// As the request gave it; `nil` for its front end's default (``FrontEndDefaults``).
    public var conflict: ConflictChoice?
    /// A conditional save: replace the file only while it is at this version. When it
    /// changed meanwhile, a `conflict` of ``ConflictChoice/ask`` asks the session what to do
    /// (``ChangedFileChoice``); any other is refused with `changedSinceRead`.
    public var ifVersion: FileVersion?

    /// Writes `bytes` as the file at `path`.
    public init(_ path: VirtualPath, bytes: [UInt8], conflict: ConflictChoice? = nil, ifVersion: FileVersion? = nil) {
        self.path = path
        self.bytes = bytes
        self.conflict = conflict
        self.ifVersion = ifVersion
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        let service = context.service
        if let ifVersion {
            let (path, bytes) = (path, bytes)
            return try await context.settlingChange(asking: conflict == .ask) { answer throws(CofferError) in
                switch answer {
                case nil: try await service.writeFile(path, bytes: bytes, conflict: .replace, ifVersion: ifVersion)
                case .overwrite?: try await service.writeFile(path, bytes: bytes, conflict: .replace)
                case .keepBoth?: try await service.writeFile(path, bytes: bytes, conflict: .keepBoth)
                case .keepInRecovered?: try await service.saveInRecovered(bytes, named: path.name)
                }
            }
        }
        return try await context.settling(context.conflict(conflict, for: Self.self, otherwise: Self.defaultConflict), about: path) { policy, _ throws(CofferError) in
            try await service.writeFile(path, bytes: bytes, conflict: policy)
        }
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        [((try? outcome.get())?.path ?? path).description]
    }
}
