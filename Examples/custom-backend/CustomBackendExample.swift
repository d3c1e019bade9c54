// A storage backend of your own, mounted beside Coffer's standard mounts and driven by the
// normal front ends — the whole application in this one file.
//
//     swift run custom-backend-example                               # the REPL; try `mounts`, `ls mem:/`
//     swift run custom-backend-example -c 'cp -r Download mem:/; ls mem:/'
//     echo 'cp notes.txt mem:/' | swift run custom-backend-example  # piped commands
//     swift run custom-backend-example rpc                           # JSON-RPC 2.0 on stdin/stdout,
//                                                                    # with a method of its own: mem/usage
//
// It takes exactly `coffer`'s arguments (`--container`, `--lang`, `-c`, `rpc`, …); its default
// container is ~/.local/share/custom-backend-example. `mem:` lives as long as the process:
// each `-c` run starts with it empty. COFFER_MEM_QUOTA sets its size in bytes (1 MiB by default).
//
// Documentation/Writing a storage backend.md walks through this file.
import CofferApp
@_spi(Engine) public import CofferCore
import CofferInMemory
import CofferJSONRPC
import FileService
import Foundation
import Synchronization

/// `mem:` — files kept in memory, up to a quota.
///
/// A backend is any `Sendable` type conforming to `StorageBackend`. This one keeps its items
/// in an `InMemoryBackend` and adds one rule of its own: the bytes of all its files may not
/// exceed `quota`. A write that would go over fails with `outOfSpace`, which both front ends
/// show as the message a full disk gets, and leaves nothing behind.
public struct QuotaMemoryBackend: StorageBackend {
    /// The most bytes all files together may hold.
    public let quota: Int64
    /// Where the items are. `InMemoryBackend` already keeps the contract: names byte for
    /// byte, writes invisible until committed, atomic moves.
    let storage = InMemoryBackend()

    public init(quota: Int64) {
        self.quota = quota
    }

    /// Bytes held by all files now.
    public var usedBytes: Int64 { storage.usedBytes }

    // What the backend can do. `.writable` lets the service change things here; without
    // it, `FileService` refuses every change with `readOnly` before calling the backend.
    public var capabilities: BackendCapabilities { [.writable, .atomicMove] }

    // Reading, creating folders, moving and removing need no rule of their own: the calls
    // go straight through. Paths arrive validated and relative to this mount's root
    // (`mem:/a/b` has components ["a", "b"]); errors are `CofferError`s naming the path.
    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        try await storage.contentsOfFolder(at: path)
    }

    public func node(at path: VirtualPath) async throws -> FileNode {
        try await storage.node(at: path)
    }

    public func createFolder(at path: VirtualPath) async throws {
        try await storage.createFolder(at: path)
    }

    public func openFile(at path: VirtualPath) async throws -> any ReadableFile {
        try await storage.openFile(at: path)
    }

    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        try await storage.moveItem(at: source, to: destination, conflict: conflict)
    }

    public func removeItem(at path: VirtualPath) async throws {
        try await storage.removeItem(at: path)
    }

    // Writing is where the quota is kept. Every byte the service writes here — `cp`,
    // `files/write`, uploads, imports, and copies from other mounts, which stream through
    // `makeWrite` — passes through a `QuotaWrite`.
    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite {
        // A file already at `path` may be replaced by this write, giving its bytes back.
        let existing = (try? await storage.node(at: path))?.size ?? 0
        return QuotaWrite(inner: try await storage.makeWrite(at: path), path: path, replacing: existing, backend: self)
    }

    // `copyItem` is not written here: the protocol's default copies by reading and writing
    // through the methods above, so copies inside `mem:` are counted too.
}

/// A write to `mem:` that fails as soon as the quota would be exceeded.
final class QuotaWrite: PendingWrite {
    let inner: any PendingWrite
    let path: VirtualPath
    let backend: QuotaMemoryBackend
    /// The size of the file this write may replace, when it began.
    let replacing: Int64
    private let pending = Mutex<Int64>(0)

    init(inner: any PendingWrite, path: VirtualPath, replacing: Int64, backend: QuotaMemoryBackend) {
        self.inner = inner
        self.path = path
        self.replacing = replacing
        self.backend = backend
    }

    func write(_ bytes: [UInt8]) async throws {
        let total = pending.withLock { pending in
            pending += Int64(bytes.count)
            return pending
        }
        // Fail early, before holding more bytes than could ever be kept. The service aborts
        // the write after a failure, so nothing of it is left.
        if backend.usedBytes - replacing + total > backend.quota { throw CofferError(.outOfSpace, path: path) }
        try await inner.write(bytes)
    }

    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {
        try await inner.setAttributes(permissions: permissions, modificationDate: modificationDate)
    }

    func commit(conflict: ConflictPolicy) async throws {
        // Checked again at the end: other writes may have been committed meanwhile. A file
        // this one replaces gives its bytes back.
        let replaced = conflict == .replace ? ((try? await backend.node(at: path))?.size ?? 0) : 0
        if backend.usedBytes - replaced + pending.withLock({ $0 }) > backend.quota {
            throw CofferError(.outOfSpace, path: path)
        }
        try await inner.commit(conflict: conflict)
    }

    func abort() async {
        await inner.abort()
    }
}

/// `mem/usage`: how much of its quota `mem:` holds — a JSON-RPC method of the application's
/// own, answered by `custom-backend-example rpc` beside Coffer's methods.
///
/// A method is a type: its name on the wire, its params and its result (both `Codable`), and
/// what it does with the request's context — here it finds the application's own backend among
/// the service's mounts. Methods that touch files perform an operation in the context's session
/// (`context.perform(CopyItem(…))`), which audits it as Coffer's own methods are audited.
struct MemoryUsage: RPCMethod {
    static let name = "mem/usage"

    struct Result: Encodable, Sendable { var usedBytes, quota, freeBytes: Int64 }

    static func run(_ params: NoParams, _ context: RequestContext) async throws -> Result {
        guard let memory = context.service.mounts.first(where: { $0.name == "mem" })?.backend as? QuotaMemoryBackend else {
            throw CofferError(.unknownMount, detail: "mem")
        }
        let used = memory.usedBytes
        return Result(usedBytes: used, quota: memory.quota, freeBytes: max(0, memory.quota - used))
    }
}

/// The application: `coffer`'s front ends over the standard mounts plus `mem:`, and one
/// JSON-RPC method of its own.
@main
struct CustomBackendExample {
    static func main() async {
        let quota = ProcessInfo.processInfo.environment["COFFER_MEM_QUOTA"].flatMap(Int64.init) ?? 1 << 20
        // The one place mounts are registered: `files:`, `trash:` and `staging:` come with
        // the container; this closure adds the application's own. Its methods are added
        // beside it, the same way.
        let application = CofferApplication(name: "custom-backend-example", extraMethods: [MemoryUsage.self]) { _, _ in
            [Mount(name: "mem", backend: QuotaMemoryBackend(quota: quota),
                   description: LocalizedText("Kept in memory, up to \(quota) bytes, until the program ends",
                                              "保存在内存中，最多 \(quota) 字节，程序结束即清空"))]
        }
        await application.main()
    }
}
