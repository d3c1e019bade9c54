import CCofferSystem
public import CofferCore
import CofferRuntime
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension TrashBackend {
    // MARK: Putting in

    /// Moves the item at `path` of `backend` into the trash.
    ///
    /// The information file is put in place first (whole, by `link`, which fails on a name
    /// already taken, so two processes never pick the same name), then the item is moved
    /// under the same name: a crash between the two leaves the item where it was and an
    /// information file without an item, which the next start removes (``OperationJournal``)
    /// and listing meanwhile leaves out. From a ``LocalFolderBackend`` on the trash's
    /// file system the move is one rename; otherwise the item is copied in and removed once
    /// the copy is complete.
    public func put(_ path: VirtualPath, from backend: any StorageBackend,
                    date: Date = Date()) async throws(CofferError) -> TrashItem {
        try await put([path], from: backend, date: date)[0].get()
    }

    /// Moves several items of one backend into the trash, each as ``put(_:from:date:)``
    /// does, in one pass: a failure is returned for its item and the others go on.
    public func put(_ paths: [VirtualPath], from backend: any StorageBackend,
                    date: Date = Date()) async -> [Result<TrashItem, CofferError>] {
        var results = [Result<TrashItem, CofferError>?](repeating: nil, count: paths.count)
        if let local = backend as? any LocalFolderBackend {
            let moved = (try? await BlockingIO.run { cancellation throws(CofferError) in
                paths.map { path -> Result<TrashItem, CofferError>? in
                    if cancellation.isCancelled { return .failure(CofferError(.cancelled, path: path)) }
                    do throws(CofferError) {
                        // nil: another file system, copied below.
                        return try self.rename(path, from: local, date: date).map { .success($0) }
                    } catch {
                        return .failure(error)
                    }
                }
            }) ?? []
            for (index, result) in moved.enumerated() { results[index] = result }
        }
        for (index, path) in paths.enumerated() where results[index] == nil {
            do throws(CofferError) {
                results[index] = .success(try await copyIn(path, from: backend, date: date))
            } catch {
                results[index] = .failure(error)
            }
        }
        return results.map { $0! }
    }

    /// The rename path: `nil` when the item is on another file system (copy it instead).
    private func rename(_ path: VirtualPath, from local: any LocalFolderBackend, date: Date) throws(CofferError) -> TrashItem? {
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        return try local.withParentFolder(of: path) { parent, name throws(CofferError) in
            try rename(name, in: parent, path: path, date: date)
        }
    }

    private func rename(_ name: String, in parent: Int32, path: VirtualPath, date: Date) throws(CofferError) -> TrashItem? {
        try rename(name, in: parent, info: TrashInfo(path: hostPath(for: path), deletionDate: date, virtualPath: path),
                   path: path, date: date)
    }

    /// Moves a host item — `name` in the folder `parent`, which is `hostPath` — into this
    /// trash (the user's desktop trash, for what an export replaces): its information first,
    /// then the item by a rename. Returns its ID here; `nil` when it is on another file system.
    /// `entry`, when given, is the item's name in `parent` where that differs from `name`, the
    /// name it is trashed under (a copy of a file made beside it under a temporary name).
    public func putHostItem(named name: String, entry: String? = nil, in parent: Int32,
                            hostPath: String) throws(CofferError) -> String? {
        let info = TrashInfo(path: hostPath, deletionDate: Date(), virtualPath: nil)
        let label = (try? VirtualPath.root().appending(name)) ?? VirtualPath.root()
        return try rename(name, entry: entry, in: parent, info: info, path: label, date: info.deletionDate ?? Date())?.id
    }

    private func rename(_ name: String, entry: String? = nil, in parent: Int32, info: TrashInfo, path: VirtualPath,
                        date: Date) throws(CofferError) -> TrashItem? {
        let entry = entry ?? name
        var existing = coffer_stat()
        guard coffer_statx(parent, entry, &existing) == 0 else {
            throw CofferError.lastSystemError("statx", path: path)
        }
        var attempt = 0
        while true {
            let id = try reserveName(for: name, info: info, path: path, skipping: attempt)
            if coffer_renameat2(parent, entry, filesFolder.raw, id, UInt32(COFFER_RENAME_NOREPLACE)) == 0 {
                let node = browser.makeNode(existing, name: id, path: trashPath(id), linkTarget: nil, hidden: false,
                                            excluded: false)
                let (target, foreign) = restoreTarget(for: info, id: id)
                return TrashItem(id: id, originalPath: target, isForeign: foreign, originalHostPath: nil,
                                 deletionDate: date, node: node, size: node.kind == .file ? node.size : nil)
            }
            let code = errno
            unlinkat(infoFolder.raw, id + TrashInfo.suffix, 0)
            if code == EXDEV { return nil }
            // An item without information holds that name: try the next one.
            guard code == EEXIST, attempt < Self.nameLimit else { throw CofferError.system(code, "renameat2", path: path) }
            attempt += 1
        }
    }

    /// The copy path, for other backends and other file systems.
    private func copyIn(_ path: VirtualPath, from backend: any StorageBackend, date: Date) async throws(CofferError) -> TrashItem {
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        let info = TrashInfo(path: hostPath(for: path), deletionDate: date, virtualPath: path)
        _ = try await call(path) { try await backend.node(at: path) }
        var attempt = 0
        var id: String
        while true {
            id = try await BlockingIO.run { [attempt] _ throws(CofferError) in
                try self.reserveName(for: path.name, info: info, path: path, skipping: attempt)
            }
            do {
                try await StreamingCopy.copy(from: backend, at: path, to: writer, at: trashPath(id), conflict: .fail,
                                             progress: .none)
                break
            } catch {
                // A failed copy leaves nothing in files/; the original is untouched.
                unlinkat(infoFolder.raw, id + TrashInfo.suffix, 0)
                let failure = CofferError.wrapping(error, path: path)
                // An item without information holds that name: try the next one.
                guard failure.kind == .fileExists, attempt < Self.nameLimit else { throw failure }
                attempt += 1
            }
        }
        // If removing the original fails, the complete copy stays in the trash: nothing is lost.
        _ = try await call(path) { try await backend.removeItem(at: path) }
        let placed = id
        return try await BlockingIO.run { _ throws(CofferError) in try self.makeItem(id: placed, info: info) }
    }

    /// How many names of one item the trash tries: more than a copy does, since one name
    /// (`untitled.txt`) may be trashed many times over the years.
    static let nameLimit = 100_000

    /// Puts `info/<id>.trashinfo` in place under the first free name for `name`, after
    /// `skipping` names known to be taken in `files/`. The item name leaves room for the
    /// suffix within 255 bytes.
    ///
    /// The information is written whole under a partial name first and then linked to its
    /// real name: `link` fails on a taken name just as `O_EXCL` does, and a crash leaves a
    /// complete information file or none — never the empty one other trash tools report as
    /// broken.
    private func reserveName(for name: String, info: TrashInfo, path: VirtualPath,
                             skipping: Int) throws(CofferError) -> String {
        let base = TrashInfo.idBase(for: name)
        let bytes = Array(info.text.utf8)
        journal?.notePartials(inFolder: ["info"], below: self.path)
        let temporary = PartialName.make()
        let fd = openat(infoFolder.raw, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
        defer { unlinkat(infoFolder.raw, temporary, 0) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let code = errno
        Glibc.close(fd)
        guard written == bytes.count else { throw CofferError.system(written < 0 ? code : ENOSPC, "write", path: path) }
        let reserved = try UniqueName.claim(base, skipping: skipping, limit: Self.nameLimit) { candidate throws(CofferError) -> String? in
            // Noted before it exists: a crash right after the link must still be settled.
            journal?.noteTrashEntry(candidate, inTrashAt: self.path)
            if linkat(infoFolder.raw, temporary, infoFolder.raw, candidate + TrashInfo.suffix, 0) == 0 { return candidate }
            if errno == EEXIST { return nil }
            throw CofferError.lastSystemError("linkat", path: path)
        }
        guard let reserved else { throw CofferError(.fileExists, path: path) }
        return reserved
    }

    // MARK: Listing

    /// Everything in the trash, oldest first, and what does not follow the specification.
    ///
    /// An information file without an item, or one that cannot be read, is reported and
    /// skipped; an item without (readable) information is listed, to be restored to the
    /// root of `files:`, and reported too. Nothing here is fatal.
    public func items() async throws(CofferError) -> (items: [TrashItem], problems: [TrashProblem]) {
        try await BlockingIO.run { _ throws(CofferError) in try self.scan() }
    }

    func scan() throws(CofferError) -> (items: [TrashItem], problems: [TrashProblem]) {
        let infoNames = try infoFolder.entryNames(reporting: nil).filter { $0.hasSuffix(TrashInfo.suffix) }
        var itemNames = Set(try filesFolder.entryNames(reporting: nil))
        var sizes = DirectorySizes.load(from: trashFolder)
        let cachedSizes = sizes
        var items: [TrashItem] = []
        var problems: [TrashProblem] = []
        for infoName in infoNames {
            let id = String(infoName.dropLast(TrashInfo.suffix.count))
            guard itemNames.contains(id) else {
                // Empty or unreadable, and no item: what a tool killed while writing it left.
                if readInfo(id) == nil && isAbandoned(infoName) {
                    unlinkat(infoFolder.raw, infoName, 0)
                    continue
                }
                problems.append(TrashProblem(id: id, reason: .missingItem))
                continue
            }
            guard let info = readInfo(id) ?? repairedInfo(id) else {
                problems.append(TrashProblem(id: id, reason: .damagedInfo))
                continue  // listed below, as an item without information
            }
            itemNames.remove(id)
            if let item = try? makeItem(id: id, info: info, sizes: &sizes) { items.append(item) }
        }
        let reported = Set(problems.map(\.id))
        for id in itemNames.sorted() {
            if !reported.contains(id) { problems.append(TrashProblem(id: id, reason: .missingInfo)) }
            let info = TrashInfo(path: id, deletionDate: nil, virtualPath: nil)
            if var item = try? makeItem(id: id, info: info, sizes: &sizes) {
                item.originalPath = Self.foreignTarget(name: id, id: id)
                item.originalHostPath = nil  // unknown
                items.append(item)
            }
        }
        let listed = Set(items.map(\.id))
        sizes.entries = sizes.entries.filter { name, _ in listed.contains(name) }
        if sizes != cachedSizes { sizes.write(to: trashFolder) }
        items.sort { ($0.deletionDate ?? .distantPast, $0.id) < ($1.deletionDate ?? .distantPast, $1.id) }
        return (items, problems.sorted { $0.id < $1.id })
    }

    /// The item with `id`, if it is in the trash.
    public func item(_ id: String) async throws(CofferError) -> TrashItem {
        try Self.checkID(id)
        return try await BlockingIO.run { _ throws(CofferError) in
            guard try self.exists(id) else { throw CofferError(.noSuchFile, path: self.trashPath(id)) }
            if let info = self.readInfo(id) { return try self.makeItem(id: id, info: info) }
            var item = try self.makeItem(id: id, info: TrashInfo(path: id, deletionDate: nil, virtualPath: nil))
            item.originalPath = Self.foreignTarget(name: id, id: id)
            item.originalHostPath = nil  // unknown
            return item
        }
    }

    /// How long an information file may stay empty or unreadable before it is taken for a
    /// crash's leftover rather than one another tool is writing now.
    static let abandonedAfter: TimeInterval = 5 * 60

    private func isAbandoned(_ infoName: String) -> Bool {
        var info = stat()
        return fstatat(infoFolder.raw, infoName, &info, AT_SYMLINK_NOFOLLOW) == 0
            && Double(info.st_mtim.tv_sec) < Date().timeIntervalSince1970 - Self.abandonedAfter
    }

    /// For an item whose information file has been empty or unreadable too long to be in the
    /// making: a whole information file in its place, restoring to the root of `files:` as
    /// Coffer does for any item without information, so other trash tools see a valid entry
    /// and not a broken one. `nil` while it is young, or when it cannot be written.
    private func repairedInfo(_ id: String) -> TrashInfo? {
        let infoName = id + TrashInfo.suffix
        guard isAbandoned(infoName) else { return nil }
        var modified = stat()
        guard fstatat(infoFolder.raw, infoName, &modified, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        let target = Self.foreignTarget(name: id, id: id)
        let info = TrashInfo(path: hostPath(for: target), deletionDate: Date(timeIntervalSince1970: Double(modified.st_mtim.tv_sec)),
                             virtualPath: target)
        journal?.notePartials(inFolder: ["info"], below: path)
        let temporary = PartialName.make()
        let fd = openat(infoFolder.raw, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        let bytes = Array(info.text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
        guard written == bytes.count, renameat(infoFolder.raw, temporary, infoFolder.raw, infoName) == 0 else {
            unlinkat(infoFolder.raw, temporary, 0)
            return nil
        }
        return info
    }

    func readInfo(_ id: String) -> TrashInfo? {
        readSmallFile(named: id + TrashInfo.suffix, in: infoFolder, limit: 65536).flatMap(TrashInfo.init(parsing:))
    }

    func makeItem(id: String, info: TrashInfo) throws(CofferError) -> TrashItem {
        var sizes = DirectorySizes.load(from: trashFolder)
        let before = sizes
        let item = try makeItem(id: id, info: info, sizes: &sizes)
        if sizes != before { sizes.write(to: trashFolder) }
        return item
    }

    private func makeItem(id: String, info: TrashInfo, sizes: inout DirectorySizes) throws(CofferError) -> TrashItem {
        let node = try browser.nodeSync(at: trashPath(id))
        let (target, foreign) = restoreTarget(for: info, id: id)
        var size = node.size
        if node.kind != .file {
            var infoStat = stat()
            let modified = fstatat(infoFolder.raw, id + TrashInfo.suffix, &infoStat, AT_SYMLINK_NOFOLLOW) == 0
                ? Int64(infoStat.st_mtim.tv_sec) : 0
            if let cached = sizes.entries[id], cached.infoModified == modified {
                size = cached.size
            } else {
                size = DirectorySizes.diskUsage(of: id, in: filesFolder)
                sizes.entries[id] = DirectorySizes.Entry(size: size, infoModified: modified)
            }
        }
        return TrashItem(id: id, originalPath: target, isForeign: foreign, originalHostPath: foreign ? info.path : nil,
                         deletionDate: info.deletionDate, node: node, size: size)
    }

    // MARK: Restoring and emptying

    /// Moves the item `id` to `target` in `backend`, then removes its information file.
    ///
    /// `target`'s folder must exist. With `.fail` nothing is overwritten; `.replace`
    /// replaces atomically (the service trashes the replaced item first, so nothing is lost).
    /// Into a ``LocalFolderBackend`` on the trash's file system this is one rename.
    public func restore(_ id: String, to target: VirtualPath, in backend: any StorageBackend,
                        conflict: ConflictPolicy) async throws(CofferError) {
        try Self.checkID(id)
        // Between the move and the removal of its information, a crash would leave that
        // information without an item: the next start removes it.
        journal?.noteTrashEntry(id, inTrashAt: path)
        if let local = backend as? any LocalFolderBackend {
            let done = try await BlockingIO.run { _ throws(CofferError) -> Bool in
                guard try self.exists(id) else { throw CofferError(.noSuchFile, path: self.trashPath(id)) }
                do throws(CofferError) {
                    try local.withParentFolder(of: target) { parent, name throws(CofferError) in
                        // Placement keeps what it is given: a descriptor of its own.
                        let folder = fcntl(parent, F_DUPFD_CLOEXEC, 0)
                        guard folder >= 0 else { throw CofferError.lastSystemError("fcntl", path: target) }
                        try Placement.place(id, from: self.filesFolder, as: name, in: Descriptor(folder),
                                            conflict: conflict, path: target)
                    }
                } catch where error.errno == EXDEV {
                    return false
                }
                unlinkat(self.infoFolder.raw, id + TrashInfo.suffix, 0)
                return true
            }
            if done { return }
        }
        do {
            try await StreamingCopy.copy(from: browser, at: trashPath(id), to: backend, at: target, conflict: conflict,
                                         progress: .none)
        } catch {
            throw CofferError.wrapping(error, path: target)
        }
        try await BlockingIO.run { _ throws(CofferError) in try self.discard(id) }
    }

    /// Deletes for good every item trashed before `cutoff` (everything when `nil`; then
    /// also information files without an item and items without information).
    /// - Returns: how many items were deleted.
    @discardableResult
    public func empty(olderThan cutoff: Date? = nil, progress: ProgressReporter = .none) async throws(CofferError) -> Int {
        try await BlockingIO.run { cancellation throws(CofferError) -> Int in
            let (items, problems) = try self.scan()
            let emptied = items.filter { $0.isEmptied(olderThan: cutoff) }
            progress.expect(bytes: emptied.reduce(0) { $0 + ($1.size ?? 0) }, items: emptied.count)
            var removed = 0
            for item in emptied {
                try cancellation.check(nil)
                try self.discard(item.id)
                progress.advance(bytes: item.size ?? 0, items: 1)
                removed += 1
            }
            if cutoff == nil {
                for problem in problems where problem.reason == .missingItem {
                    unlinkat(self.infoFolder.raw, problem.id + TrashInfo.suffix, 0)
                }
            }
            _ = try? self.scan()  // prunes directorysizes
            return removed
        }
    }

    /// Deletes one item for good, by its name in the trash (`empty-trash NAME`).
    /// - Throws: `noSuchFile` when the trash has no such item.
    public func delete(_ id: String) async throws(CofferError) {
        try Self.checkID(id)
        try await BlockingIO.run { _ throws(CofferError) in
            var info = stat()
            let hasInfo = fstatat(self.infoFolder.raw, id + TrashInfo.suffix, &info, AT_SYMLINK_NOFOLLOW) == 0
            guard try self.exists(id) || hasInfo else { throw CofferError(.noSuchFile, path: self.trashPath(id)) }
            try self.discard(id)
            // Its line in `directorysizes` goes too: the one line, not a scan of the whole trash
            // (`empty-trash A B C` deletes item by item).
            var sizes = DirectorySizes.load(from: self.trashFolder)
            if sizes.entries.removeValue(forKey: id) != nil { sizes.write(to: self.trashFolder) }
        }
    }

    /// Removes an item, then its information file (the order the specification asks for).
    private func discard(_ id: String) throws(CofferError) {
        journal?.noteTrashEntry(id, inTrashAt: path)
        if try exists(id) { try RemoveTree.remove(id, in: filesFolder, path: trashPath(id)) }
        unlinkat(infoFolder.raw, id + TrashInfo.suffix, 0)
    }

    // MARK: Helpers

    func trashPath(_ id: String) -> VirtualPath { VirtualPath.root(of: mountName).appending(trustedName: id) }

    func exists(_ id: String) throws(CofferError) -> Bool {
        var info = coffer_stat()
        if coffer_statx(filesFolder.raw, id, &info) == 0 { return true }
        if errno == ENOENT { return false }
        throw CofferError.lastSystemError("statx", path: trashPath(id))
    }

    /// An id names one entry of `files/`: a plain name, never a path.
    static func checkID(_ id: String) throws(CofferError) {
        guard FileName.problem(with: id) == nil else {
            throw CofferError(.noSuchFile, path: nil, detail: id)
        }
    }

    private func call<T>(_ path: VirtualPath, _ body: () async throws -> T) async throws(CofferError) -> T {
        do { return try await body() } catch { throw CofferError.wrapping(error, path: path) }
    }
}
