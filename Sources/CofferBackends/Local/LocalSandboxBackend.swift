import CCofferSystem
public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A folder on the local disk, confined so nothing outside it is ever read or written.
///
/// Every access starts from a descriptor of the root and resolves paths with
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, or, where the kernel lacks it,
/// with a walk that opens one component at a time with `O_NOFOLLOW`. Symbolic links
/// inside the root are listed as what they are and never followed; pipes, sockets and
/// devices are listed and never opened. Operations then work on the parent folder's
/// descriptor and the item's name, so a rename or a swap for a link during the operation
/// cannot send it elsewhere.
///
/// Writes go to a hidden temporary name in the destination folder and are renamed into
/// place with `renameat2(RENAME_NOREPLACE)` (or `RENAME_EXCHANGE` when replacing), so no
/// half-written file ever appears under a real name.
public final class LocalSandboxBackend: StorageBackend, ImmediateMetadata {
    /// How paths are resolved below the root.
    public enum Resolution: Sendable {
        /// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (Linux 5.6+).
        case openat2
        /// One `openat(O_NOFOLLOW)` per component.
        case componentWalk
    }

    let root: Descriptor
    let resolution: Resolution
    let registry: TypeRegistry
    let writable: Bool
    /// Flush file data to disk before a write becomes visible under its real name.
    let syncBeforeCommit: Bool
    /// The host folder it was opened on, as given.
    let rootPath: String
    /// Where the folders that get partials are noted, for recovery after a crash.
    let journal: OperationJournal?
    /// Backup exclusions and `.hidden` lists already read, each checked against its source.
    let metadata = MetadataCache()

    public var capabilities: BackendCapabilities {
        writable ? [.writable, .backupExclusion, .atomicMove] : [.backupExclusion]
    }

    /// Opens the backend on an existing folder.
    ///
    /// - Parameters:
    ///   - rootPath: A host folder; it must exist and must not itself be a link.
    ///   - resolution: Forces a resolution strategy; by default `openat2` when the kernel has it.
    ///   - registry: Decides type identifiers and packages.
    ///   - writable: `false` makes every change fail with `readOnly`.
    ///   - syncBeforeCommit: `fdatasync` each written file before it is renamed into place, so
    ///     a crash cannot leave a real name pointing at unwritten data.
    ///   - journal: Notes each folder that gets a partial (``OperationJournal``), so the
    ///     next start removes what a killed process left.
    /// - Throws: `noSuchFile` or `notADirectory` for the root (with no path; the host path
    ///   is never put in an error).
    public init(rootPath: String, resolution: Resolution? = nil, registry: TypeRegistry = .standard,
                writable: Bool = true, syncBeforeCommit: Bool = true, journal: OperationJournal? = nil) throws(CofferError) {
        let fd = Glibc.open(rootPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: nil) }
        self.root = Descriptor(fd)
        self.resolution = resolution ?? (Self.kernelHasOpenat2(fd) ? .openat2 : .componentWalk)
        self.registry = registry
        self.writable = writable
        self.syncBeforeCommit = syncBeforeCommit
        self.rootPath = rootPath
        self.journal = journal
    }

    /// Notes that a partial is about to be made in the folder holding `path`.
    func notePartial(beside path: VirtualPath) {
        journal?.notePartials(inFolder: Array(path.components.dropLast()), below: rootPath)
    }

    private static func kernelHasOpenat2(_ fd: Int32) -> Bool {
        let probe = coffer_openat2(fd, ".", UInt64(O_RDONLY | O_DIRECTORY | O_CLOEXEC), 0,
                                   UInt64(COFFER_RESOLVE_BENEATH))
        if probe >= 0 { _ = Glibc.close(probe); return true }
        return errno != ENOSYS
    }

    // MARK: Resolution

    /// Opens the folder at `components` below the root, following no link.
    func openFolder(_ components: ArraySlice<String>, reporting path: VirtualPath) throws(CofferError) -> Descriptor {
        if components.isEmpty {
            let fd = fcntl(root.raw, F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else { throw CofferError.lastSystemError("fcntl", path: path) }
            return Descriptor(fd)
        }
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        switch resolution {
        case .openat2:
            let relative = components.joined(separator: "/")
            let resolve = UInt64(COFFER_RESOLVE_BENEATH | COFFER_RESOLVE_NO_SYMLINKS
                                 | COFFER_RESOLVE_NO_MAGICLINKS)
            for _ in 0..<8 {
                let fd = coffer_openat2(root.raw, relative, UInt64(flags), 0, resolve)
                if fd >= 0 { return Descriptor(fd) }
                // EAGAIN: a concurrent rename raced the lookup; the kernel asks us to retry.
                if errno != EAGAIN { break }
            }
            throw CofferError.lastSystemError("openat2", path: path)
        case .componentWalk:
            var current = root
            for name in components {
                let fd = openat(current.raw, name, flags)
                guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
                current = Descriptor(fd)
            }
            return current
        }
    }

    /// Opens the folder that holds `path`'s item.
    func openParent(of path: VirtualPath) throws(CofferError) -> Descriptor {
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        return try openFolder(path.components.dropLast(), reporting: path)
    }

    /// Opens the folder at `path`.
    func openFolder(at path: VirtualPath) throws(CofferError) -> Descriptor {
        try openFolder(path.components[...], reporting: path)
    }

    func requireWritable(_ path: VirtualPath) throws(CofferError) {
        if !writable { throw CofferError(.readOnly, path: path) }
    }

    // MARK: Reading

    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        try await contentsOfFolder(at: path, readingBackupExclusion: true)
    }

    /// Without `readingBackupExclusion`, no extended attribute is read (one `getxattr` an
    /// item less: a fifth of the time of a large listing).
    public func contentsOfFolder(at path: VirtualPath, readingBackupExclusion: Bool) async throws -> [FileNode] {
        try await BlockingIO.run { _ throws(CofferError) in
            let folder = try self.openFolder(at: path)
            return try self.listFolder(folder, at: path, readingBackupExclusion: readingBackupExclusion)
        }
    }

    public func node(at path: VirtualPath) async throws -> FileNode {
        try await BlockingIO.run { _ throws(CofferError) in try self.nodeSync(at: path) }
    }

    public func nodeImmediately(at path: VirtualPath) throws(CofferError) -> FileNode { try nodeSync(at: path) }

    func nodeSync(at path: VirtualPath) throws(CofferError) -> FileNode {
        if path.isRoot {
            var info = coffer_stat()
            guard coffer_fstat(root.raw, &info) == 0 else { throw CofferError.lastSystemError("statx", path: path) }
            return makeNode(info, name: "", path: path, linkTarget: nil, hidden: false, excluded: false)
        }
        // An item at the root is read relative to the root's own descriptor: no copy of it to make and close.
        let parent = path.components.count == 1 ? root : try openParent(of: path)
        let hidden = metadata.hiddenList(of: parent)
        guard let node = try entryNode(in: parent, name: path.name, path: path, hidden: hidden) else {
            throw CofferError(.noSuchFile, path: path)
        }
        return node
    }

    /// Reads a folder once: `readdir`, then one `statx` per entry relative to the folder.
    func listFolder(_ folder: Descriptor, at path: VirtualPath, readingBackupExclusion: Bool = true) throws(CofferError) -> [FileNode] {
        var names = try folder.entryNames(reporting: path)
        let hidden = names.contains(HiddenList.fileName) ? metadata.hiddenList(of: folder) : HiddenList.empty
        names.removeAll { PartialName.isPartial($0) }
        let entries = names
        // Large folders are stat'ed on every core: statx and getxattr are independent
        // lookups relative to the same open folder.
        let slices = Parallel.slices(for: entries.count, threshold: 512, most: 8)
        let results = Parallel.perSlice(entries, slices: slices) { names in
            Result { () throws(CofferError) -> [FileNode] in
                var nodes: [FileNode] = []
                nodes.reserveCapacity(names.count)
                for name in names {
                    if let node = try entryNode(in: folder, name: name, path: path.appending(trustedName: name), hidden: hidden,
                                                readingBackupExclusion: readingBackupExclusion) {
                        nodes.append(node)
                    }
                }
                return nodes
            }
        }
        var nodes: [FileNode] = []
        for result in results { nodes += try result.get() }
        return nodes
    }

    /// The node for `name` in `folder`, or `nil` if it vanished meanwhile.
    func entryNode(in folder: Descriptor, name: String, path: VirtualPath, hidden: HiddenList,
                   readingBackupExclusion: Bool = true) throws(CofferError) -> FileNode? {
        var info = coffer_stat()
        guard coffer_statx(folder.raw, name, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw CofferError.lastSystemError("statx", path: path)
        }
        let type = FileMode(info.mode)
        var linkTarget: String?
        if type == .symbolicLink { linkTarget = Self.readLink(in: folder, name: name) }
        let excluded = readingBackupExclusion && (type == .regular || type == .directory)
            && metadata.isExcluded(in: folder, name: name, info: info)
        let isHidden = FileNode.isDotName(name) || hidden.contains(name)
        return makeNode(info, name: name, path: path, linkTarget: linkTarget, hidden: isHidden, excluded: excluded)
    }

    func makeNode(_ info: coffer_stat, name: String, path: VirtualPath, linkTarget: String?,
                  hidden: Bool, excluded: Bool) -> FileNode {
        let mode = FileMode(info.mode)
        let kind: FileNode.Kind
        let typeIdentifier: String
        var special: FileNode.Special?
        switch mode {
        case .directory:
            typeIdentifier = path.isRoot ? FileType.Identifier.folder : registry.typeIdentifier(forFolderNamed: name)
            kind = typeIdentifier == FileType.Identifier.folder ? .folder : .package
        case .regular:
            kind = .file
            typeIdentifier = registry.typeIdentifier(forFileNamed: name)
        case .symbolicLink:
            kind = .file
            special = .symbolicLink
            typeIdentifier = FileType.Identifier.symbolicLink
        case .fifo, .socket, .device:
            kind = .file
            special = mode == .fifo ? .fifo : (mode == .socket ? .socket : .device)
            typeIdentifier = FileType.Identifier.item
        }
        return FileNode(
            path: path, kind: kind, size: mode == .directory ? 0 : Int64(info.size),
            modificationDate: info.modificationDate,
            creationDate: info.has_btime != 0
                ? Date(timeIntervalSince1970: Double(info.btime_sec) + Double(info.btime_nsec) / 1e9) : nil,
            isHidden: hidden, typeIdentifier: typeIdentifier, isExcludedFromBackup: excluded,
            special: special, linkTarget: linkTarget, version: kind == .file && special == nil ? info.version : nil,
            permissions: UInt16(info.mode & 0o7777),
            accessDate: Date(timeIntervalSince1970: Double(info.atime_sec) + Double(info.atime_nsec) / 1e9))
    }

    static func readLink(in folder: Descriptor, name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(folder.raw, name, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func openFile(at path: VirtualPath) async throws -> any ReadableFile {
        try await BlockingIO.run { _ throws(CofferError) in
            let parent = try self.openParent(of: path)
            let (fd, info) = try Self.openRegularFile(in: parent, name: path.name, path: path)
            return LocalReadableFile(descriptor: fd, info: info, path: path)
        }
    }

    /// Opens a regular file for reading without following a link and without blocking
    /// on a pipe, and checks that what was opened is what was asked for.
    static func openRegularFile(in folder: Descriptor, name: String, path: VirtualPath) throws(CofferError) -> (Descriptor, coffer_stat) {
        var before = coffer_stat()
        guard coffer_statx(folder.raw, name, &before) == 0 else { throw CofferError.lastSystemError("statx", path: path) }
        switch FileMode(before.mode) {
        case .regular: break
        case .directory: throw CofferError(.isADirectory, path: path)
        default: throw CofferError(.unsupported, path: path)
        }
        let fd = openat(folder.raw, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
        let descriptor = Descriptor(fd)
        var after = coffer_stat()
        guard coffer_fstat(fd, &after) == 0 else { throw CofferError.lastSystemError("fstat", path: path) }
        // The entry may have been swapped between the stat and the open.
        guard FileMode(after.mode) == .regular else { throw CofferError(.unsupported, path: path) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return (descriptor, after)
    }
}

/// The file type bits of a mode.
enum FileMode: Equatable {
    case regular, directory, symbolicLink, fifo, socket, device

    init(_ mode: UInt32) {
        switch mode & 0o170000 {
        case 0o040000: self = .directory
        case 0o100000: self = .regular
        case 0o120000: self = .symbolicLink
        case 0o010000: self = .fifo
        case 0o140000: self = .socket
        default: self = .device
        }
    }
}

/// Names listed in a folder's `.hidden` file (one per line), which listings mark hidden.
struct HiddenList {
    static let fileName = FolderEntry.hiddenListName
    static let empty = HiddenList(names: [])

    private let names: Set<[UInt8]>

    private init(names: Set<[UInt8]>) { self.names = names }

    /// Reads `.hidden` in `folder`; a missing, oversized or non-regular file hides nothing.
    init(folder: Descriptor) {
        guard let (fd, info) = try? LocalSandboxBackend.openRegularFile(in: folder, name: Self.fileName, path: .root()),
              info.size <= 1 << 20
        else { self.init(names: []); return }
        var bytes = [UInt8](repeating: 0, count: Int(info.size))
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd.raw, $0.baseAddress, $0.count) }
        guard count > 0 else { self.init(names: []); return }
        let lines = bytes[..<count].split(separator: UInt8(ascii: "\n")).map { line in
            Array(line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...])
        }
        self.init(names: Set(lines))
    }

    func contains(_ name: String) -> Bool {
        !names.isEmpty && names.contains(Array(name.utf8))
    }
}

extension LocalSandboxBackend: LocalFolderBackend {
    public func withParentFolder<T>(of path: VirtualPath,
                                    _ body: (_ folder: Int32, _ name: String) throws(CofferError) -> T) throws(CofferError) -> T {
        let parent = try openParent(of: path)
        return try withExtendedLifetime(parent) { () throws(CofferError) -> T in try body(parent.raw, path.name) }
    }
}

extension LocalSandboxBackend: HostPathNaming {
    public func hostPath(of path: VirtualPath) -> String {
        path.isRoot ? rootPath : rootPath + path.absoluteString
    }
}
