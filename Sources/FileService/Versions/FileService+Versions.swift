import CofferBackends
@_spi(Engine) public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One version's fate in a pruning: kept or dropped, and why, in restic's words.
public struct VersionDecision: Sendable, Hashable {
    /// The version.
    public var version: SavedVersion
    /// Whether it stays.
    public var keep: Bool
    /// The rules that kept it (`daily snapshot`, `within 1d`), or why it goes when no rule
    /// dropped it (`over the size limit`).
    public var reasons: [String]
}

/// What a pruning of versions kept and dropped.
public struct PruneReport: Sendable, Hashable {
    /// Every version considered, file by file (by path), newest first within a file.
    public var decisions: [VersionDecision]
    /// The size limit applied, in bytes.
    public var sizeLimit: Int64
    /// Whether nothing was removed (a dry run).
    public var dryRun: Bool

    /// The bytes the dropped versions take (or took).
    public var droppedBytes: Int64 { decisions.filter { !$0.keep }.reduce(0) { $0 + $1.version.size } }
}

extension FileService {
    /// The version store, for a mount whose replaced files it keeps: a visible, writable
    /// mount of a service that has one. A mount whose files are replaced by one write
    /// (``TrashCopyingBackend``) needs its storage to keep the versions
    /// (``VersionKeepingBackend``); without that, its replaced files go to its trash.
    private func versionStore(for path: VirtualPath) -> VersionStore? {
        guard let store = feature(VersionStore.self), let mount = try? mount(for: path), mount.isVisible, mount.isWritable,
              !(mount.backend is any TrashCopyingBackend) || mount.backend is any VersionKeepingBackend else { return nil }
        return store
    }

    /// The backend of the mount holding `held`.
    func holder(of held: HeldVersion, for path: VirtualPath) throws(CofferError) -> any VersionKeepingBackend {
        guard let backend = try? mount(for: .root(of: held.mount)).backend as? any VersionKeepingBackend else {
            throw CofferError(.noSuchFile, path: path, detail: "no-version")
        }
        return backend
    }

    /// Keeps the file `node` as a version of itself while it stays in place: a hard link into
    /// the version store on the local file system (no byte copied), else a copy. The caller
    /// then replaces the file in one step (``ConflictPolicy/replace``), or, when that fails,
    /// discards the version (``discardVersion(_:of:)``). `nil` where versions are not kept (the
    /// replace trashes the file instead).
    func keepVersion(of node: FileNode) async throws(CofferError) -> Int? {
        guard let store = versionStore(for: node.path) else { return nil }
        let path = node.path
        let backend = try mount(for: path).backend
        if let keeping = backend as? any VersionKeepingBackend {
            // Kept in the mount's own storage, then entered: a kill between the two leaves a
            // copy nobody lists, never an entry without content.
            let location = try await keeping.keepVersion(of: path)
            do throws(CofferError) {
                return try await store.enter(node, author: ReplacedItems.current?.author,
                                             held: HeldVersion(mount: path.mount, location: location))
            } catch {
                try? await keeping.discardKeptVersion(location)
                throw error
            }
        }
        if let local = backend as? any LocalFolderBackend {
            // A version an earlier replace of this file linked in but was killed before placing.
            let live = try await BlockingIO.run { _ throws(CofferError) -> (device: UInt64, inode: UInt64)? in
                try local.withParentFolder(of: path) { folder, name throws(CofferError) -> (device: UInt64, inode: UInt64)? in
                    var info = Glibc.stat()
                    guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
                    return (UInt64(info.st_dev), UInt64(info.st_ino))
                }
            }
            if let live { try await store.dropInterrupted(of: path, live: live) }
        }
        let id = try await store.enter(node, author: ReplacedItems.current?.author)
        do throws(CofferError) {
            if let local = backend as? any LocalFolderBackend {
                let target = store.contentHostPath(id)
                let linked = try await BlockingIO.run { _ throws(CofferError) -> Bool in
                    try local.withParentFolder(of: path) { folder, name throws(CofferError) -> Bool in
                        if linkat(folder, name, AT_FDCWD, target, 0) == 0 { return true }
                        // Another file system, or one without hard links: copied below.
                        if [EXDEV, EPERM, EMLINK, ENOTSUP].contains(errno) { return false }
                        throw CofferError.lastSystemError("linkat", path: path)
                    }
                }
                if linked { return id }
            }
            try await call(path) {
                try await StreamingCopy.copy(from: backend, at: path, to: store.contents, at: store.contentPath(id),
                                             conflict: .fail, progress: .none)
            }
            return id
        } catch {
            try? await store.forget(id)
            throw error
        }
    }

    /// Makes the file `backup` (an editor's `NAME~`, holding what `NAME` had before it was
    /// saved by renaming it aside and writing anew) a version of `file`, and removes it: its
    /// content is linked into the version store, as a replace's is. `nil` where versions are not
    /// kept, or where the backup is not on the local file system (then nothing changes).
    func keepBackup(_ backup: FileNode, asVersionOf file: VirtualPath) async throws(CofferError) -> Int? {
        guard let store = versionStore(for: file), let local = try mount(for: backup.path).backend as? any LocalFolderBackend,
              backup.path.mount == file.mount else { return nil }
        var entered = backup
        entered.path = file
        let id = try await store.enter(entered, author: ReplacedItems.current?.author)
        let target = store.contentHostPath(id), source = backup.path
        do throws(CofferError) {
            try await BlockingIO.run { _ throws(CofferError) in
                try local.withParentFolder(of: source) { folder, name throws(CofferError) in
                    guard linkat(folder, name, AT_FDCWD, target, 0) == 0 else { throw CofferError.lastSystemError("linkat", path: source) }
                }
            }
        } catch {
            try? await store.forget(id)
            return nil
        }
        let backend = try mount(for: source).backend
        try await call(source) { try await backend.removeItem(at: source) }
        ReplacedItems.current?.addVersion(id)
        return id
    }

    /// Drops version `id`, kept by a replace that then failed: the file it was kept of is
    /// still in place.
    func discardVersion(_ id: Int, of path: VirtualPath) async {
        guard let store = versionStore(for: path) else { return }
        if let held = try? await store.held(id) {
            guard let backend = try? holder(of: held, for: path), (try? await backend.discardKeptVersion(held.location)) != nil else { return }
            try? await store.forget(id)
            return
        }
        try? await store.remove(id, in: self)
    }

    /// The versions of the file at `path`, newest first.
    /// - Throws: `unsupported` (detail `versions`) on a service that keeps none.
    @_spi(Engine) public func versions(of path: VirtualPath) async throws(CofferError) -> [SavedVersion] {
        let store = try require(VersionStore.self, "versions")
        let backend = try mount(for: path).backend
        // The file itself, on the local file system: a content that is it is no earlier version.
        var live: (device: UInt64, inode: UInt64)?
        if let local = backend as? any LocalFolderBackend, !path.isRoot {
            live = try? await BlockingIO.run { _ throws(CofferError) -> (device: UInt64, inode: UInt64)? in
                try local.withParentFolder(of: path) { folder, name throws(CofferError) -> (device: UInt64, inode: UInt64)? in
                    var info = Glibc.stat()
                    guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
                    return (UInt64(info.st_dev), UInt64(info.st_ino))
                }
            }
        }
        let versions = try await store.versions(of: path, live: live)
        // Held by a mount's storage: a content that is a file's current one is no earlier version.
        var current: Set<HeldVersion> = []
        for (mount, held) in Dictionary(grouping: versions.compactMap(\.held), by: \.mount) {
            guard let backend = try? holder(of: held[0], for: path) else { continue }
            for location in await backend.currentContents(among: held.map(\.location)) {
                current.insert(HeldVersion(mount: mount, location: location))
            }
        }
        return versions.filter { $0.held.map { !current.contains($0) } ?? true }
    }

    /// Version `id` of the file at `path`.
    /// - Throws: `noSuchFile` (naming the version) when the file has no version `id`.
    @_spi(Engine) public func version(_ id: Int, of path: VirtualPath) async throws(CofferError) -> SavedVersion {
        let store = try require(VersionStore.self, "versions")
        do throws(CofferError) {
            let (version, trash) = try await store.version(id)
            guard trash == nil, version.path == path else { throw CofferError(.noSuchFile, path: path, detail: "no-version") }
            return version
        } catch where error.kind == .noSuchFile {
            throw CofferError(.noSuchFile, path: path, detail: "no-version")
        }
    }

    /// Opens version `id` of the file at `path` for reading.
    @_spi(Engine) public func openVersion(_ id: Int, of path: VirtualPath) async throws(CofferError) -> any ReadableFile {
        let version = try await version(id, of: path)
        if let held = version.held {
            let backend = try holder(of: held, for: path)
            do throws(CofferError) {
                return try await backend.openVersion(held.location)
            } catch where error.kind == .noSuchFile {
                throw CofferError(.noSuchFile, path: path, detail: "no-version")
            }
        }
        let store = try require(VersionStore.self, "versions")
        return try await call(path) { try await store.contents.openFile(at: store.contentPath(id)) }
    }

    /// Puts version `id` of the file at `path` at `destination` (the file itself, or a new
    /// name beside it): what is at `destination` becomes a version in turn, under `replace`;
    /// the version stays among the versions.
    /// - Returns: where the content now is.
    @discardableResult
    @_spi(Engine) public func restoreVersion(_ id: Int, of path: VirtualPath, to destination: VirtualPath,
                                             conflict: ConflictPolicy) async throws(CofferError) -> VirtualPath {
        let version = try await version(id, of: path)
        let store = try require(VersionStore.self, "versions")
        let backend = try writableMount(for: destination).backend
        let placed = try await settle(destination, conflict: conflict, arriving: .file) { target, policy in
            if version.held != nil {
                // Held by a mount's storage: read through its backend, dated as the version is.
                try await StreamingCopy.copy(self.openVersion(id, of: path), named: path.description, modified: version.date,
                                             to: backend, at: target, conflict: policy)
            } else {
                try await StreamingCopy.copy(from: store.contents, at: store.contentPath(id), to: backend, at: target,
                                             conflict: policy, progress: .none)
            }
        }
        return placed
    }

    /// Applies `policy` to the versions of each file (all files, or those at and below `below`),
    /// then drops the oldest of what it keeps while the versions take more than `sizeLimit`
    /// (default: a tenth of the file system holding them). With `dryRun` nothing is removed.
    @_spi(Engine) public func pruneVersions(policy: RetentionPolicy, sizeLimit: Int64?, below: VirtualPath?,
                                            dryRun: Bool) async throws(CofferError) -> PruneReport {
        let store = try require(VersionStore.self, "versions")
        let limit = sizeLimit ?? Self.defaultVersionLimit(store.path)
        let all = try await store.liveVersions()
        var byFile: [VirtualPath: [SavedVersion]] = [:]
        for version in all where below.map({ $0 == version.path || $0.contains(version.path) }) ?? true {
            byFile[version.path, default: []].append(version)
        }
        var decisions: [VersionDecision] = []
        for path in byFile.keys.sorted(by: { $0.description < $1.description }) {
            let versions = byFile[path]!.sorted { ($0.date, $0.id) > ($1.date, $1.id) }
            for decision in policy.apply(to: versions.map(\.date)) {
                decisions.append(VersionDecision(version: versions[decision.index], keep: decision.keep, reasons: decision.reasons))
            }
        }
        // The size limit counts every version in the container, those outside `below` and of
        // trashed files too; what mounts' own storage holds is pruned by the rules alone.
        var total = try await store.totalSize() - decisions.filter { !$0.keep && $0.version.held == nil }.reduce(0) { $0 + $1.version.size }
        if total > limit {
            let oldestFirst = decisions.indices.filter { decisions[$0].keep && decisions[$0].version.held == nil }
                .sorted { (decisions[$0].version.date, decisions[$0].version.id) < (decisions[$1].version.date, decisions[$1].version.id) }
            for index in oldestFirst where total > limit {
                decisions[index].keep = false
                decisions[index].reasons = ["over the size limit"]
                total -= decisions[index].version.size
            }
        }
        if !dryRun {
            for decision in decisions where !decision.keep {
                if decision.version.held != nil {
                    try? await store.remove(decision.version.id, in: self)  // its mount may be away: next time
                } else {
                    try await store.remove(decision.version.id, in: self)
                }
            }
        }
        return PruneReport(decisions: decisions, sizeLimit: limit, dryRun: dryRun)
    }

    /// A tenth of the file system holding `path`.
    static func defaultVersionLimit(_ path: String) -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return Int64.max }
        return Int64(info.f_blocks) * Int64(info.f_frsize) / 10
    }
}
