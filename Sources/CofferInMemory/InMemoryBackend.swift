public import CofferCore
import Foundation
import Synchronization

/// A storage backend that keeps its items in memory: for tests, for scratch space, and as a
/// model of the ``StorageBackend`` contract in one readable file.
///
/// - Names are kept byte for byte (a Swift `String` compares NFC and NFD spellings as equal,
///   so they are keyed by their UTF-8 bytes): `café` and `cafe\u{301}` are two items, as on
///   a Linux disk.
/// - A write collects its bytes in the pending write and becomes an item only in
///   ``PendingWrite/commit(conflict:)``, under the store's lock, so no reader ever sees part
///   of it; ``PendingWrite/abort()`` just drops the bytes.
/// - Every change happens under one lock, so moves and commits are atomic and concurrent
///   operations never see a half-made change. Nothing blocks, so no call leaves the caller's
///   thread.
/// - Dot-names are hidden; names of the ``PartialName`` shape (partial copies
///   being built) are left out of listings.
public final class InMemoryBackend: StorageBackend, SpaceReportingBackend, Sendable {
    /// The items, as a tree of folders.
    struct Store {
        var root = Folder(modified: Date(), created: Date())
        /// Bytes held by all files.
        var usedBytes: Int64 = 0
        /// Counts commits: each file written gets the next number as its version.
        var writes: UInt64 = 0
    }

    /// A name as its UTF-8 bytes, so that different normalisations stay different.
    struct Name: Hashable {
        let bytes: [UInt8]
        init(_ name: String) { bytes = Array(name.utf8) }
        var string: String { String(decoding: bytes, as: UTF8.self) }
    }

    struct File {
        var bytes: [UInt8]
        var modified: Date
        var created: Date
        /// Which commit made this content (set when committed): its version.
        var generation: UInt64 = 0
    }

    struct Folder {
        var children: [Name: Item] = [:]
        var modified: Date
        var created: Date
    }

    enum Item {
        case file(File)
        case folder(Folder)

        var bytes: Int64 {
            switch self {
            case .file(let file): Int64(file.bytes.count)
            case .folder(let folder): folder.children.values.reduce(0) { $0 + $1.bytes }
            }
        }
    }

    let store = Mutex(Store())
    let registry: TypeRegistry

    public init(registry: TypeRegistry = .standard) {
        self.registry = registry
    }

    public var capabilities: BackendCapabilities { [.writable, .atomicMove] }

    /// Bytes held by all files, for quotas and tests.
    public var usedBytes: Int64 { store.withLock { $0.usedBytes } }

    /// The bytes held, with no limit: memory is not counted against a size of its own.
    public func space() async throws -> StorageSpace { StorageSpace(usedBytes: usedBytes, totalBytes: nil) }

    // MARK: Reading

    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        try store.withLock { store throws(CofferError) in
            let folder = try Self.folder(at: path.components[...], in: store.root, path: path)
            return folder.children.compactMap { name, item in
                let text = name.string
                guard !PartialName.isPartial(text) else { return nil }
                return node(item, at: path.appending(trustedName: text))
            }
        }
    }

    public func node(at path: VirtualPath) async throws -> FileNode {
        try store.withLock { store throws(CofferError) in
            node(try Self.item(at: path, in: store.root), at: path)
        }
    }

    public func openFile(at path: VirtualPath) async throws -> any ReadableFile {
        let item = try store.withLock { store throws(CofferError) in try Self.item(at: path, in: store.root) }
        guard case .file(let file) = item else { throw CofferError(.isADirectory, path: path) }
        // The bytes as they are now: a later write to the same name replaces the item, not them.
        return MemoryReadableFile(bytes: file.bytes, version: FileVersion(token: "m\(file.generation)"))
    }

    func node(_ item: Item, at path: VirtualPath) -> FileNode {
        let hidden = FileNode.isDotName(path.name)
        switch item {
        case .file(let file):
            return FileNode(path: path, kind: .file, size: Int64(file.bytes.count), modificationDate: file.modified,
                            creationDate: file.created, isHidden: hidden,
                            typeIdentifier: registry.typeIdentifier(forFileNamed: path.name),
                            version: FileVersion(token: "m\(file.generation)"))
        case .folder(let folder):
            let type = path.isRoot ? FileType.Identifier.folder : registry.typeIdentifier(forFolderNamed: path.name)
            return FileNode(path: path, kind: type == FileType.Identifier.folder ? .folder : .package,
                            modificationDate: folder.modified, creationDate: folder.created, isHidden: hidden,
                            typeIdentifier: type)
        }
    }

    // MARK: Changing

    public func createFolder(at path: VirtualPath) async throws {
        guard !path.isRoot else { throw CofferError(.fileExists, path: path) }
        let now = Date()
        try store.withLock { store throws(CofferError) in
            try Self.modifyFolder(at: path.components.dropLast(), in: &store.root, path: path) { parent throws(CofferError) in
                guard parent.children[Name(path.name)] == nil else { throw CofferError(.fileExists, path: path) }
                parent.children[Name(path.name)] = .folder(Folder(modified: now, created: now))
                parent.modified = now
            }
        }
    }

    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite {
        guard !path.isRoot else { throw CofferError(.isADirectory, path: path) }
        // The folder must exist now; it is checked again at commit.
        _ = try store.withLock { store throws(CofferError) in
            try Self.folder(at: path.components.dropLast(), in: store.root, path: path)
        }
        return MemoryPendingWrite(backend: self, path: path)
    }

    /// Puts a finished file in place: the only moment a write becomes visible.
    func commit(_ file: File, at path: VirtualPath, conflict: ConflictPolicy) throws(CofferError) {
        try store.withLock { store throws(CofferError) in
            var file = file
            file.generation = store.writes + 1
            let freed = try Self.modifyFolder(at: path.components.dropLast(), in: &store.root, path: path) {
                parent throws(CofferError) -> Int64 in
                let existing = parent.children[Name(path.name)]
                if existing != nil && !conflict.replaces { throw CofferError(.fileExists, path: path) }
                parent.children[Name(path.name)] = .file(file)
                parent.modified = file.created
                return existing?.bytes ?? 0
            }
            store.writes = file.generation
            store.usedBytes += Int64(file.bytes.count) - freed
        }
    }

    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        guard !source.isRoot, !destination.isRoot else { throw CofferError(.invalidOperation, path: source) }
        if source == destination { return }
        if source.contains(destination) { throw CofferError(.invalidOperation, path: source, detail: "into-itself") }
        let now = Date()
        try store.withLock { store throws(CofferError) in
            // Check everything first, then change: a failed move changes nothing.
            let item = try Self.item(at: source, in: store.root)
            let target = try Self.folder(at: destination.components.dropLast(), in: store.root, path: destination)
            let replaced = target.children[Name(destination.name)]
            if replaced != nil && !conflict.replaces { throw CofferError(.fileExists, path: destination) }
            try Self.modifyFolder(at: source.components.dropLast(), in: &store.root, path: source) { parent throws(CofferError) in
                parent.children[Name(source.name)] = nil
                parent.modified = now
            }
            try Self.modifyFolder(at: destination.components.dropLast(), in: &store.root, path: destination) {
                parent throws(CofferError) in
                parent.children[Name(destination.name)] = item
                parent.modified = now
            }
            store.usedBytes -= replaced?.bytes ?? 0
        }
    }

    public func removeItem(at path: VirtualPath) async throws {
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        let now = Date()
        try store.withLock { store throws(CofferError) in
            let removed = try Self.modifyFolder(at: path.components.dropLast(), in: &store.root, path: path) {
                parent throws(CofferError) -> Item in
                guard let item = parent.children.removeValue(forKey: Name(path.name)) else {
                    throw CofferError(.noSuchFile, path: path)
                }
                parent.modified = now
                return item
            }
            store.usedBytes -= removed.bytes
        }
    }

    // MARK: The tree

    /// The item at `path`: `noSuchFile` when a name is missing, `notADirectory` when a file
    /// stands where a folder should.
    static func item(at path: VirtualPath, in root: Folder) throws(CofferError) -> Item {
        guard let name = path.components.last else { return .folder(root) }
        let parent = try folder(at: path.components.dropLast(), in: root, path: path)
        guard let item = parent.children[Name(name)] else { throw CofferError(.noSuchFile, path: path) }
        return item
    }

    static func folder(at components: ArraySlice<String>, in root: Folder, path: VirtualPath) throws(CofferError) -> Folder {
        var folder = root
        for name in components {
            switch folder.children[Name(name)] {
            case .folder(let child)?: folder = child
            case .file?: throw CofferError(.notADirectory, path: path)
            case nil: throw CofferError(.noSuchFile, path: path)
            }
        }
        return folder
    }

    /// Runs `body` on the folder at `components`, in place.
    @discardableResult
    static func modifyFolder<T>(at components: ArraySlice<String>, in folder: inout Folder, path: VirtualPath,
                                _ body: (inout Folder) throws(CofferError) -> T) throws(CofferError) -> T {
        guard let first = components.first else { return try body(&folder) }
        let key = Name(first)
        guard case .folder(var child)? = folder.children[key] else {
            throw CofferError(folder.children[key] == nil ? .noSuchFile : .notADirectory, path: path)
        }
        // Taken out while it changes, so the change happens in place rather than on a copy.
        folder.children[key] = nil
        defer { folder.children[key] = .folder(child) }
        return try modifyFolder(at: components.dropFirst(), in: &child, path: path, body)
    }
}

/// Bytes being written: nothing of them is in the store until commit.
final class MemoryPendingWrite: PendingWrite {
    private let backend: InMemoryBackend
    private let path: VirtualPath
    private let state = Mutex<(bytes: [UInt8], modified: Date?, finished: Bool)>(([], nil, false))

    init(backend: InMemoryBackend, path: VirtualPath) {
        self.backend = backend
        self.path = path
    }

    func write(_ bytes: [UInt8]) async throws {
        try state.withLock { state throws(CofferError) in
            guard !state.finished else { throw CofferError(.invalidOperation, path: path) }
            state.bytes += bytes
        }
    }

    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {
        state.withLock { $0.modified = modificationDate ?? $0.modified }
    }

    func commit(conflict: ConflictPolicy) async throws {
        let (bytes, modified) = try state.withLock { state throws(CofferError) in
            guard !state.finished else { throw CofferError(.invalidOperation, path: path) }
            state.finished = true
            return (state.bytes, state.modified)
        }
        let now = Date()
        try backend.commit(InMemoryBackend.File(bytes: bytes, modified: modified ?? now, created: now),
                           at: path, conflict: conflict)
    }

    func abort() async {
        state.withLock { state in
            state.finished = true
            state.bytes = []
        }
    }
}

/// A file's bytes as they were when it was opened.
final class MemoryReadableFile: ReadableFile {
    private let bytes: [UInt8]
    private let position = Mutex<Int?>(0)
    let version: FileVersion?

    init(bytes: [UInt8], version: FileVersion?) {
        self.bytes = bytes
        self.version = version
    }

    var size: Int64 { Int64(bytes.count) }

    func read(upTo count: Int) async throws -> [UInt8] {
        try position.withLock { position throws(CofferError) in
            guard let start = position else { throw CofferError(.invalidOperation, detail: "closed") }
            let end = min(bytes.count, start + max(0, count))
            position = end
            return Array(bytes[start..<end])
        }
    }

    func read(at offset: Int64, upTo count: Int) async throws -> [UInt8] {
        guard position.withLock({ $0 != nil }) else { throw CofferError(.invalidOperation, detail: "closed") }
        let start = Int(min(max(0, offset), Int64(bytes.count)))
        return Array(bytes[start..<min(bytes.count, start + max(0, count))])
    }

    func close() async { position.withLock { $0 = nil } }
}
