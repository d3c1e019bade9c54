@_spi(Engine) public import CofferCore
import CofferRuntime
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A file of a mount whose storage cannot be written in place (an S3 bucket), open for
/// writing through a copy on local disk: the uploads area holds the copy (`mount-UUID`), the
/// program reads and writes it as a local file, and ``SaveUpdatedFile`` sends it to the
/// storage as a whole, conditional on the version the copy began from. A copy with changes not
/// yet sent has a record beside it (`….json`, written at its first change, kept current at
/// each send): a process killed before it sent them leaves both, and ``FinishPendingSaves``
/// sends them later. While open, the copy is locked (`flock`), so that the finishing of
/// another process, or of this one, leaves it to its owner.
final class StagedCopy: Sendable {
    /// What a copy with unsent changes keeps beside it, to be sent after a crash.
    struct Record: Codable {
        var data: String
        var destination: String
        /// The version the copy began from; none for a new file.
        var base: String?
        /// Whether that version is replaced without keeping it (it was empty, or the copy's own).
        var emptyBase: Bool?
    }

    struct State {
        /// Where the copy is sent (a conflict moves it to the name it was kept under).
        var destination: VirtualPath
        /// The version of the file it began from (or was last sent as); `nil` for a new file.
        var base: FileVersion?
        /// Whether that version is empty: replacing it keeps no version of nothing.
        var baseIsEmpty: Bool
        /// Whether that version is what this copy sent: replacing it keeps no version either,
        /// so a file sent at each `fsync` while open keeps one version, of what it replaced
        /// first, as a local file written in place does.
        var baseIsOwn = false
        /// Changes made, and the count of them already sent.
        var changes = 0
        var sent = 0
        var isSending = false
        /// Whether the record on disk names the unsent changes (a record that could not be
        /// written is tried again at the next change).
        var recorded = false
        /// Whether the file was deleted while open: nothing is sent any more.
        var deleted = false

        func record(of name: String) -> Record {
            Record(data: name, destination: destination.description, base: base?.token, emptyBase: baseIsEmpty || baseIsOwn)
        }
    }

    static let prefix = "mount-"

    /// The uploads area (host path) and the copy's name there.
    let folder: String
    let name: String
    let state: Mutex<State>

    init(folder: String, name: String, destination: VirtualPath, base: FileVersion?, baseIsEmpty: Bool) {
        self.folder = folder
        self.name = name
        state = Mutex(State(destination: destination, base: base, baseIsEmpty: baseIsEmpty))
    }

    var dataPath: String { folder + "/" + name }
    var recordPath: String { dataPath + ".json" }
    var hasUnsentChanges: Bool { state.withLock { $0.changes != $0.sent } }

    /// A new name for a copy.
    static func newName() -> String { prefix + UUID().uuidString }

    /// Notes a change; the record is written when it does not name unsent changes yet.
    func changed() throws(CofferError) {
        let failure = state.withLock { state -> CofferError? in
            guard !state.deleted else { return nil }
            state.changes += 1
            guard !state.recorded else { return nil }
            if let failure = Self.write(state.record(of: name), to: recordPath, naming: state.destination) { return failure }
            state.recorded = true
            return nil
        }
        if let failure { throw failure }
    }

    /// After a send of the first `changes`, begun to `destination`, arrived as `node`: crossed
    /// off when nothing came meanwhile, else the record names the new base. A file deleted during
    /// the send stays deleted; one moved during it keeps the destination it was moved to.
    func sent(_ changes: Int, to destination: VirtualPath, as node: FileNode) {
        state.withLock { state in
            state.isSending = false
            if state.deleted {
                state.sent = state.changes
                if state.recorded { unlink(recordPath) }
                state.recorded = false
                return
            }
            state.sent = changes
            guard state.destination == destination else {
                // (Moved meanwhile: what was sent is at the old name, and the next send goes to the new one.)
                if state.recorded { _ = Self.write(state.record(of: name), to: recordPath, naming: state.destination) }
                return
            }
            state.destination = node.path
            state.base = node.version
            state.baseIsEmpty = node.size == 0
            state.baseIsOwn = true
            if state.changes == state.sent {
                unlink(recordPath)
                state.recorded = false
            } else {
                // Changes came during the send: the record names the new base. (Should that
                // fail, the old one stands, and a later finishing keeps the copy beside.)
                _ = Self.write(state.record(of: name), to: recordPath, naming: state.destination)
            }
        }
    }

    /// The file, or a folder holding it, was moved from `source` to `target` while open: the
    /// copy is sent to where it went (and the record, if any, says so). Whether it moved.
    @discardableResult
    func moved(from source: VirtualPath, to target: VirtualPath) -> Bool {
        state.withLock { state in
            guard source.contains(state.destination) else { return false }
            state.destination = VirtualPath(mount: target.mount, trustedComponents: target.components
                                            + state.destination.components.dropFirst(source.components.count))
            if state.recorded { _ = Self.write(state.record(of: name), to: recordPath, naming: state.destination) }
            return true
        }
    }

    /// The file at the destination is `node` now, holding what the copy last sent (a move made
    /// its object anew, under another version): later sends replace it, keeping no version.
    func rebase(on node: FileNode) {
        state.withLock { state in
            guard !state.deleted, node.path == state.destination, state.base != nil else { return }
            state.base = node.version
            if state.recorded { _ = Self.write(state.record(of: name), to: recordPath, naming: state.destination) }
        }
    }

    /// The file was deleted while open: what it holds, and what is written to it from now on,
    /// is sent nowhere.
    func deleted() {
        state.withLock { state in
            state.deleted = true
            state.sent = state.changes
            if state.recorded { unlink(recordPath) }
            state.recorded = false
        }
    }

    /// Writes `record` whole or not at all (aside, then renamed).
    static func write(_ record: Record, to path: String, naming destination: VirtualPath) -> CofferError? {
        guard let data = try? JSONEncoder().encode(record) else { return CofferError(.ioError, path: destination) }
        let aside = path + ".new"
        guard FileManager.default.createFile(atPath: aside, contents: data, attributes: [.posixPermissions: 0o600]),
              rename(aside, path) == 0 else { return CofferError.lastSystemError("write", path: destination) }
        return nil
    }

    /// Lets the copy go when the file is closed: removed with its record when everything was
    /// sent, or when `discarding`; otherwise both stay, for ``FinishPendingSaves``. Called
    /// while the copy's descriptor (and so its lock) is still open.
    func release(discarding: Bool) {
        guard discarding || !hasUnsentChanges else { return }
        unlink(dataPath)
        unlink(recordPath)
    }
}

/// Sends what a program wrote to a file of an S3 mount open through ``OpenForUpdate`` (a copy
/// on local disk) to the storage, as one whole object: what `close(2)` and `fsync(2)` do under
/// `coffer mount`. Nothing is sent when nothing changed since the last send. The replace is
/// conditional on the version the copy began from, so a change made meanwhile elsewhere is
/// never lost: then the copy is kept beside it under a new name (as keep-both names it), and
/// later sends from the same open file go there. What the send replaces is kept as a version
/// (or in the trash), as every replace.
///
/// Returns the file as sent, or `nil` when there was nothing to send (a local file, written in
/// place, never has).
public struct SaveUpdatedFile: FileOperation {
    public static let name = "saveUpdated"
    public static let changesFiles = true

    /// The open file.
    public var file: UpdatableFile

    /// Sends what was written to `file`.
    public init(_ file: UpdatableFile) { self.file = file }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode? {
        guard let staging = file.staging else { return nil }
        return try await context.service.send(staging)
    }

    public func auditedPaths(for outcome: Result<FileNode?, CofferError>) -> [String] {
        [((try? outcome.get())??.path ?? file.path).description]
    }
}

/// Sends the copies an earlier `coffer mount` of this container wrote but was stopped (killed)
/// before it sent — each as ``SaveUpdatedFile`` would have, conditional on the version it began
/// from, kept beside under a new name on a conflict — and removes the copies it left with
/// nothing to send. A copy still open (locked), in this process or another, is left to its owner.
///
/// Returns the files sent; one that cannot be sent now stays for the next time, and its error
/// is in the list.
public struct FinishPendingSaves: FileOperation {
    public static let name = "finishPendingSaves"
    public static let changesFiles = true

    public init() {}

    public func run(in context: OperationContext) async throws(CofferError) -> [Result<FileNode, CofferError>] {
        await context.service.finishPendingSaves()
    }

    public func auditedPaths(for outcome: Result<[Result<FileNode, CofferError>], CofferError>) -> [String] {
        ((try? outcome.get()) ?? []).compactMap { try? $0.get().path.description }
    }
}

extension FileService {
    /// A copy of the file at `path` (`node`; `nil` for a new file) in the uploads area, open
    /// for reading and writing: what ``OpenForUpdate`` opens on storage that cannot be written
    /// in place. A new or `emptying` copy starts empty, and counts as changed: it is sent even
    /// if nothing is written to it.
    func stagedCopy(of node: FileNode?, at path: VirtualPath, in backend: any StorageBackend,
                    emptying: Bool) async throws(CofferError) -> UpdatableFile {
        guard let registry = feature(UploadRegistry.self) else { throw CofferError(.unsupported, path: path, detail: OpenForUpdate.name) }
        let name = StagedCopy.newName()
        let temporary = VirtualPath.root(of: UploadRegistry.mountName).appending(trustedName: name)
        let size = node?.size ?? 0
        let changed = node == nil || (emptying && size > 0)
        do throws(CofferError) {
            if size > 0 && !emptying {
                try await call(path) {
                    try await StreamingCopy.copy(from: backend, at: path, to: registry.backend, at: temporary,
                                                 conflict: .fail, progress: .none)
                }
            } else {
                try await BlockingIO.run { _ throws(CofferError) in try registry.create(temporary) }
            }
        } catch {
            unlink(registry.hostPath(of: temporary))
            throw error.naming(path, insteadOf: UploadRegistry.mountName)
        }
        let staging = StagedCopy(folder: registry.path, name: name, destination: path, base: node?.version,
                                 baseIsEmpty: size == 0)
        let descriptor = Glibc.open(staging.dataPath, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = CofferError.lastSystemError("open", path: path)
            unlink(staging.dataPath)
            throw error
        }
        var facts = Glibc.stat()
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, fstat(descriptor, &facts) == 0, facts.st_nlink > 0 else {
            // (Not ours: a finishing that ran between its making and its locking took it.)
            Glibc.close(descriptor)
            throw CofferError(.ioError, path: path, detail: "copy taken")
        }
        let file = UpdatableFile(descriptor: descriptor, path: path, staging: staging)
        if changed {
            do throws(CofferError) {
                try staging.changed()
            } catch {
                file.discard()
                throw error
            }
        }
        return file
    }

    /// Sends `staging` if it has changes not yet sent; the file as sent, or `nil`.
    func send(_ staging: StagedCopy) async throws(CofferError) -> FileNode? {
        // One send at a time per copy: a second would find the version the first made.
        while true {
            let claimed = staging.state.withLock { state -> Bool? in
                if state.changes == state.sent || state.deleted { return nil }
                if state.isSending { return false }
                state.isSending = true
                return true
            }
            guard let claimed else { return nil }
            if claimed { break }
            do { try await Task.sleep(for: .milliseconds(5)) } catch { throw CofferError(.cancelled, path: staging.state.withLock { $0.destination }) }
        }
        let (changes, destination, base, keepingNone) = staging.state.withLock {
            ($0.changes, $0.destination, $0.base, $0.baseIsEmpty || $0.baseIsOwn)
        }
        do throws(CofferError) {
            let node = try await place(copyAt: staging.name, at: destination, expecting: base, keepingNone: keepingNone)
            staging.sent(changes, to: destination, as: node)
            return node
        } catch {
            staging.state.withLock { $0.isSending = false }
            throw error
        }
    }

    /// Sends the copy named `name` in the uploads area to `destination`, replacing the file
    /// there while it is at `base` (a new file: while the name is free); otherwise beside it,
    /// under a new name. A base that is empty, or that this copy sent itself (`keepingNone`), is
    /// replaced by one conditional write of the storage, keeping no version of it. The copy stays.
    private func place(copyAt name: String, at destination: VirtualPath, expecting base: FileVersion?,
                       keepingNone: Bool) async throws(CofferError) -> FileNode {
        let registry = try require(UploadRegistry.self, "uploads")
        let source = registry.backend
        let temporary = VirtualPath.root(of: UploadRegistry.mountName).appending(trustedName: name)
        let backend = try writableMount(for: destination).backend
        let placed: VirtualPath
        do throws(CofferError) {
            if let base, keepingNone {
                try await call(destination) {
                    try await StreamingCopy.copy(from: source, at: temporary, to: backend, at: destination, conflict: .replace,
                                                 replacing: base, progress: .none)
                }
                await indexChanged([destination])
                placed = destination
            } else {
                placed = try await settle(destination, conflict: base == nil ? .fail : .replace, arriving: .file,
                                          expecting: base) { target, policy in
                    try await StreamingCopy.copy(from: source, at: temporary, to: backend, at: target, conflict: policy,
                                                 replacing: target == destination ? base : nil, progress: .none)
                }
            }
        } catch where error.kind == .changedSinceRead || (base == nil && error.kind == .fileExists) {
            // Changed (or removed) elsewhere since the copy began: both are kept.
            placed = try await settle(destination, conflict: .keepBoth, arriving: .file) { target, policy in
                try await StreamingCopy.copy(from: source, at: temporary, to: backend, at: target, conflict: policy,
                                             progress: .none)
            }
        }
        return try await stat(placed)
    }

    /// ``FinishPendingSaves``.
    func finishPendingSaves() async -> [Result<FileNode, CofferError>] {
        guard let registry = feature(UploadRegistry.self) else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: registry.path)) ?? []
        var results: [Result<FileNode, CofferError>] = []
        // A record whose copy is gone names nothing to send.
        let copies = Set(names.filter { $0.hasPrefix(StagedCopy.prefix) && !$0.contains(".") })
        for name in names where name.hasPrefix(StagedCopy.prefix) && name.hasSuffix(".json")
            && !copies.contains(String(name.dropLast(".json".count))) {
            unlink(registry.path + "/" + name)
        }
        for name in copies.sorted() {
            let staging = StagedCopy(folder: registry.path, name: name, destination: .root(of: VirtualPath.defaultMount),
                                     base: nil, baseIsEmpty: false)
            // A copy still open (locked), in this process or another, is its owner's. (A child
            // process forked meanwhile holds the lock too until it runs its program: tried again
            // a moment before the copy is left for the next time.)
            let lock = Glibc.open(staging.dataPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard lock >= 0 else { continue }
            defer { Glibc.close(lock) }
            var locked = false
            for attempt in 0..<20 {
                if attempt > 0 { try? await Task.sleep(for: .milliseconds(10)) }
                if flock(lock, LOCK_EX | LOCK_NB) == 0 {
                    locked = true
                    break
                }
            }
            guard locked else { continue }
            guard let data = FileManager.default.contents(atPath: staging.recordPath),
                  let record = try? JSONDecoder().decode(StagedCopy.Record.self, from: data), record.data == name,
                  let destination = try? VirtualPath(parsing: record.destination) else {
                // Nothing unsent (or a record cut short, which a rename never leaves).
                unlink(staging.dataPath)
                unlink(staging.recordPath)
                continue
            }
            do throws(CofferError) {
                // Sent whole before the process was killed, but not yet crossed off: sent already.
                if let sent = try? await stat(destination), await holds(sent, sameAs: staging.dataPath) {
                    unlink(staging.recordPath)
                    unlink(staging.dataPath)
                    results.append(.success(sent))
                    continue
                }
                let node = try await place(copyAt: name, at: destination, expecting: record.base.flatMap(FileVersion.init(token:)),
                                           keepingNone: record.emptyBase ?? false)
                unlink(staging.recordPath)
                unlink(staging.dataPath)
                results.append(.success(node))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// Whether the file `node` holds what the host file at `copy` holds, read a MiB at a time.
    private func holds(_ node: FileNode, sameAs copy: String) async -> Bool {
        guard node.kind == .file, let local = FileHandle(forReadingAtPath: copy) else { return false }
        defer { try? local.close() }
        guard let size = try? local.seekToEnd(), Int64(size) == node.size, (try? local.seek(toOffset: 0)) != nil,
              let backend = try? mount(for: node.path).backend, let file = try? await backend.openFile(at: node.path) else { return false }
        var offset: Int64 = 0
        while offset < node.size {
            guard let theirs = try? await file.read(at: offset, upTo: 1 << 20), !theirs.isEmpty,
                  let ours = try? local.read(upToCount: theirs.count), ours.elementsEqual(theirs) else {
                await file.close()
                return false
            }
            offset += Int64(theirs.count)
        }
        await file.close()
        return true
    }
}
