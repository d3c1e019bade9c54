public import CofferCore

/// The versions of a file, newest first (``SavedVersion``): the contents its saves and
/// replaces displaced, each with its date, size and who replaced it.
///
/// Fails with `unsupported` (detail `versions`) on a service that keeps no versions, and
/// `unknownMount` for a mount it does not have. A file with no versions, or none there,
/// has an empty list.
public struct ListVersions: FileOperation {
    public static let name = "versions"

    /// The file whose versions are listed.
    public var path: VirtualPath

    /// Lists the versions of the file at `path`.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> [SavedVersion] {
        try await context.service.versions(of: path)
    }
}

/// Puts a version of a file back: over the file, whose content becomes a version in turn
/// (nothing is lost), or beside it under another name.
///
/// Fails with `noSuchFile` (detail `no-version`) when the file has no such version, and
/// `fileExists` when the other name given is taken.
public struct RestoreVersion: FileOperation {
    public static let name = "restoreVersion"
    public static let changesFiles = true

    /// The version's ``SavedVersion/id``.
    public var id: Int
    /// The file it is a version of.
    public var path: VirtualPath
    /// A name beside the file to restore it under instead; `nil` restores over the file.
    public var newName: String?

    /// Restores version `id` of the file at `path`, over it or as `newName` beside it.
    public init(_ id: Int, of path: VirtualPath, as newName: String? = nil) {
        self.id = id
        self.path = path
        self.newName = newName
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        let service = context.service
        let destination = try newName.map { (name) throws(CofferError) in try path.replacingName(with: name) } ?? path
        let placed = try await service.restoreVersion(id, of: path, to: destination,
                                                     conflict: newName == nil ? .replace : .fail)
        return try await service.stat(placed)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] {
        ["\(path.description)@\(id)"] + ((try? outcome.get()).map { [$0.path.description] } ?? [])
    }
}

/// Drops the versions a retention policy does not keep, file by file, then the oldest
/// while all versions take more than a size limit; with `dryRun`, only says what it would
/// drop. Each version is kept or dropped with the rules that kept it, in restic's words.
public struct PruneVersions: FileOperation {
    public static let name = "pruneVersions"
    public static let changesFiles = true

    /// The rules.
    public var policy: RetentionPolicy
    /// The most all versions may take, in bytes; `nil` for the store's own limit.
    public var sizeLimit: Int64?
    /// Only the versions of this file, or of the files below this folder.
    public var below: VirtualPath?
    /// Say what would go, removing nothing.
    public var dryRun: Bool

    /// Prunes by `policy` (the store's own when `nil`).
    public init(policy: RetentionPolicy? = nil, sizeLimit: Int64? = nil, below: VirtualPath? = nil, dryRun: Bool = false) {
        self.policy = policy ?? .standard
        self.sizeLimit = sizeLimit
        self.below = below
        self.dryRun = dryRun
    }

    public func run(in context: OperationContext) async throws(CofferError) -> PruneReport {
        let service = context.service
        let store = try service.require(VersionStore.self, "versions")
        return try await service.pruneVersions(policy: policy, sizeLimit: sizeLimit ?? store.sizeLimit, below: below,
                                               dryRun: dryRun)
    }

    public func auditedPaths(for outcome: Result<PruneReport, CofferError>) -> [String] {
        below.map { [$0.description] } ?? []
    }
}
