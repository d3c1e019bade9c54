import CCofferSystem
public import CofferCore
import CofferRuntime
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What searches and the search index need from the disk: names and entry types straight
/// from `readdir` (no `statx` per entry), and folders' modification times.
extension LocalSandboxBackend {
    public func entries(inFolderAt path: VirtualPath) async throws -> [FolderEntry] {
        try await BlockingIO.run { _ throws(CofferError) in
            try self.entriesSync(in: self.openFolder(at: path), at: path)
        }
    }

    /// The folders are read on every core: a walk spends most of its time in the kernel's
    /// `getdents`, and folders are independent.
    public func entries(inFoldersAt paths: [VirtualPath]) async -> [Result<[FolderEntry], CofferError>] {
        let results = try? await BlockingIO.run { _ throws(CofferError) in
            // One folder a slice: the workers take them as they come free.
            Parallel.perSlice(paths, slices: paths.count) { slice in
                let path = slice.first!
                return Result { () throws(CofferError) in try self.entriesSync(in: self.openFolder(at: path), at: path) }
            }
        }
        return results ?? paths.map { .failure(CofferError(.cancelled, path: $0)) }
    }

    public func nodes(at paths: [VirtualPath]) async -> [FileNode?] {
        // A batch the size a search hands over takes well under a millisecond here: it is
        // read on the caller's thread, as `files/stat` is (two thread hand-overs would cost
        // more). Larger ones go off the cooperative pool.
        if paths.count <= Self.nodesReadInPlace { return nodesSync(at: paths) }
        let nodes = try? await BlockingIO.run { _ throws(CofferError) -> [FileNode?] in self.nodesSync(at: paths) }
        return nodes ?? paths.map { _ in nil }
    }

    static let nodesReadInPlace = 256

    /// A `statx` relative to an open folder: as cheap by name as in a listing.
    public var readsItemsByNameCheaply: Bool { true }

    func nodesSync(at paths: [VirtualPath]) -> [FileNode?] {
        // Large batches are split over the cores; within a slice, paths come in walk order,
        // so each folder is opened once, from the one above it.
        Parallel.perSlice(paths, slices: Parallel.slices(for: paths.count, threshold: 64)) { slice in
            var folders = FolderChain(root: self.root)
            return slice.map { path -> FileNode? in
                guard let parent = path.parent else { return try? self.nodeSync(at: path) }
                guard let folder = folders.open(parent.components) else { return nil }
                if folder.hidden == nil { folders.hidden = self.metadata.hiddenList(of: folder.descriptor) }
                return try? self.entryNode(in: folder.descriptor, name: path.name, path: path, hidden: folders.hidden!)
            }
        }.flatMap { $0 }
    }

    func entriesSync(in folder: Descriptor, at path: VirtualPath) throws(CofferError) -> [FolderEntry] {
        var hasHiddenList = false
        var entries = try folder.readEntries(reporting: path) { raw, type -> FolderEntry? in
            let entry = Self.entry(raw, type: type, in: folder.raw)
            if entry?.name == HiddenList.fileName { hasHiddenList = true }
            return entry
        }
        if hasHiddenList {
            let hidden = metadata.hiddenList(of: folder)
            for index in entries.indices where hidden.contains(entries[index].name) { entries[index].isHidden = true }
        }
        return entries
    }

    /// The entry a `readdir` name and type hint stand for in the open folder `folder`; `nil`
    /// for a partial file (Coffer's own, never shown) or one gone before its type was read.
    static func entry(_ raw: UnsafePointer<CChar>, type: UInt8, in folder: Int32) -> FolderEntry? {
        let name = String(cString: raw)
        if PartialName.isPartial(name) { return nil }
        let kind: FolderEntry.Kind
        switch Int32(type) {
        case Int32(DT_DIR): kind = .folder
        case Int32(DT_REG): kind = .file
        case Int32(DT_UNKNOWN):
            // Some file systems give no type: ask for it.
            var info = coffer_stat()
            guard coffer_statx(folder, raw, &info) == 0 else { return nil }
            switch FileMode(info.mode) {
            case .directory: kind = .folder
            case .regular: kind = .file
            default: kind = .special
            }
        default: kind = .special
        }
        return FolderEntry(name: name, kind: kind, isHidden: FileNode.isDotName(name))
    }

    /// A reader of the folder at `path`'s entries, a batch at a time (``FolderEntryReader``).
    /// Blocking: call it off Swift's cooperative pool.
    public func entryReader(at path: VirtualPath) throws(CofferError) -> FolderEntryReader {
        let folder = try openFolder(at: path)
        return try withExtendedLifetime(folder) { () throws(CofferError) -> FolderEntryReader in
            guard let stream = coffer_opendir(folder.raw) else { throw CofferError.lastSystemError("opendir", path: path) }
            return FolderEntryReader(stream: stream, path: path)
        }
    }

    /// Split over the cores for long lists (the index asks about every folder it holds).
    public func folderModificationDates(at paths: [VirtualPath]) async throws -> [Date?] {
        try await BlockingIO.run { _ throws(CofferError) in
            Parallel.perSlice(paths, slices: Parallel.slices(for: paths.count, threshold: 256)) { slice in
                // Each folder is read in its parent, opened once for the siblings that follow
                // one another (walk order): a `statx` a folder, not an `openat2` and an `fstat`.
                var parent: (path: VirtualPath, descriptor: Descriptor)?
                return slice.map { path -> Date? in
                    var info = coffer_stat()
                    guard let parentPath = path.parent else {
                        return coffer_fstat(self.root.raw, &info) == 0 ? info.modificationDate : nil
                    }
                    if parent?.path != parentPath {
                        guard let descriptor = try? self.openFolder(at: parentPath) else { return nil }
                        parent = (parentPath, descriptor)
                    }
                    // Not followed: a link where the folder was is no folder (as opening it was not).
                    guard let parent, coffer_statx(parent.descriptor.raw, path.name, &info) == 0,
                          FileMode(info.mode) == .directory else { return nil }
                    return info.modificationDate
                }
            }.flatMap { $0 }
        }
    }
}

/// Folders opened to look items up in, for paths that come in walk order: each folder is
/// opened once, from the deepest of its ancestors already open, one name at a time and never
/// through a link (the names are checked path components: no `..`, no `/`). They are opened
/// with `O_PATH`: only the metadata of the names in them is read through them.
struct FolderChain {
    private let root: Descriptor
    private var names: [String] = []
    private var descriptors: [Descriptor] = []
    /// The `.hidden` list of the deepest folder open, once read; dropped when it changes.
    var hidden: HiddenList?

    init(root: Descriptor) { self.root = root }

    /// The folder at `components` below the root (and its `.hidden` list if read already),
    /// or `nil` when it cannot be opened as a folder.
    mutating func open(_ components: [String]) -> (descriptor: Descriptor, hidden: HiddenList?)? {
        var shared = 0
        while shared < min(names.count, components.count) && names[shared] == components[shared] { shared += 1 }
        if shared < names.count || shared < components.count { hidden = nil }
        names.removeSubrange(shared...)
        descriptors.removeSubrange(shared...)
        for name in components[shared...] {
            let fd = coffer_open_folder_for_lookup((descriptors.last ?? root).raw, name)
            guard fd >= 0 else { return nil }
            names.append(name)
            descriptors.append(Descriptor(fd))
        }
        return (descriptors.last ?? root, hidden)
    }
}
