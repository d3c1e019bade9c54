import CofferBackendConformance
import CofferBackends
import CofferCore
import CofferInMemory
import Foundation
import Synchronization
import Testing

/// The conformance suite against every backend Coffer ships, and against broken backends
/// to show that it catches real faults.
struct ConformanceTests {
    static let local = BackendConformance.Subject(name: "local sandbox", mount: "files", isWritable: true) { fixture, scratch in
        try BackendConformance.writeFixture(fixture, toFolder: scratch)
        return try LocalSandboxBackend(rootPath: scratch, syncBeforeCommit: false)
    }

    static let staging = BackendConformance.Subject(name: "export staging", mount: "staging", isWritable: true) { fixture, scratch in
        try BackendConformance.writeFixture(fixture, toFolder: scratch)
        return try ExportStagingBackend(path: scratch)
    }

    /// The trash's browsing side: the fixture trashed from a local folder, item by item.
    static let trash = BackendConformance.Subject(name: "trash (read-only browsing)", mount: "trash", isWritable: false) {
        fixture, scratch in
        try FileManager.default.createDirectory(atPath: scratch + "/files", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch + "/trash", withIntermediateDirectories: true)
        try BackendConformance.writeFixture(fixture, toFolder: scratch + "/files")
        let files = try LocalSandboxBackend(rootPath: scratch + "/files", syncBeforeCommit: false)
        let trash = try TrashBackend(path: scratch + "/trash", origins: ["files": scratch + "/files"])
        let topLevel = fixture.filter { $0.components.count == 1 }
            .map { VirtualPath.root(of: "files").appending(trustedName: $0.path) }
        for result in await trash.put(topLevel, from: files) { _ = try result.get() }
        return trash
    }

    static let memory = BackendConformance.Subject.seeding(name: "in memory", mount: "mem") { _ in InMemoryBackend() }

    @Test(arguments: [local, staging, trash, memory])
    func everyShippedBackendConforms(_ subject: BackendConformance.Subject) async {
        let report = await BackendConformance.run(subject)
        #expect(report.isPassing, "\(report)")
        #expect(report.passed.count >= (subject.isWritable ? 18 : 10), "\(report.passed)")
    }

    @Test(arguments: [
        (BrokenBackend.Fault.visibleBeforeCommit, "atomic write"),
        (.commitIgnoresConflict, "commit conflicts"),
        (.wrongErrorKind, "stat"),
        (.mergesNormalisations, "listing"),
        (.moveLosesContents, "rename and move"),
        (.unorderedBatch, "batch reads"),
    ])
    func aBrokenBackendIsCaught(fault: BrokenBackend.Fault, check: String) async {
        let subject = BackendConformance.Subject.seeding(name: "broken: \(fault)", mount: "mem") { _ in
            BrokenBackend(fault: fault)
        }
        let report = await BackendConformance.run(subject)
        #expect(report.failedChecks.contains(check), "\(report)")
        #expect(!report.isPassing)
    }
}

/// An in-memory backend with one fault built in.
struct BrokenBackend: StorageBackend {
    enum Fault: String, Sendable, CustomStringConvertible {
        /// Writes go straight to the real name, so half a file is visible.
        case visibleBeforeCommit
        /// `commit(.fail)` overwrites what is there.
        case commitIgnoresConflict
        /// A missing item is reported as an I/O error.
        case wrongErrorKind
        /// Names are compared as Swift strings, so NFC and NFD spellings become one item.
        case mergesNormalisations
        /// Moving a folder leaves its contents behind.
        case moveLosesContents
        /// `nodes(at:)` answers in another order than it was asked.
        case unorderedBatch

        var description: String { rawValue }
    }

    let fault: Fault
    let inner = InMemoryBackend()

    var capabilities: BackendCapabilities { inner.capabilities }

    func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] {
        let nodes = try await inner.contentsOfFolder(at: path)
        guard fault == .mergesNormalisations else { return nodes }
        var seen: Set<String> = []
        return nodes.filter { seen.insert($0.name).inserted }
    }

    func node(at path: VirtualPath) async throws -> FileNode {
        do {
            return try await inner.node(at: path)
        } catch let error as CofferError where fault == .wrongErrorKind && error.kind == .noSuchFile {
            throw CofferError(.ioError, path: path)
        }
    }

    func createFolder(at path: VirtualPath) async throws { try await inner.createFolder(at: path) }
    func openFile(at path: VirtualPath) async throws -> any ReadableFile { try await inner.openFile(at: path) }

    func makeWrite(at path: VirtualPath) async throws -> any PendingWrite {
        let write = try await inner.makeWrite(at: path)
        switch fault {
        case .visibleBeforeCommit: return VisibleWrite(backend: inner, path: path)
        case .commitIgnoresConflict: return ReplacingWrite(inner: write)
        default: return write
        }
    }

    func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        guard fault == .moveLosesContents, try await inner.node(at: source).kind != .file else {
            return try await inner.moveItem(at: source, to: destination, conflict: conflict)
        }
        try await inner.removeItem(at: source)
        try await inner.createFolder(at: destination)
    }

    func removeItem(at path: VirtualPath) async throws { try await inner.removeItem(at: path) }

    func nodes(at paths: [VirtualPath]) async -> [FileNode?] {
        let nodes = await inner.nodes(at: paths)
        return fault == .unorderedBatch ? nodes.reversed() : nodes
    }
}

/// Writes every chunk to the real name at once.
final class VisibleWrite: PendingWrite {
    let backend: InMemoryBackend
    let path: VirtualPath
    let written = Mutex<[UInt8]>([])

    init(backend: InMemoryBackend, path: VirtualPath) {
        self.backend = backend
        self.path = path
    }

    func write(_ bytes: [UInt8]) async throws {
        let all = written.withLock { $0 += bytes; return $0 }
        let direct = try await backend.makeWrite(at: path)
        try await direct.write(all)
        try await direct.commit(conflict: .replace)
    }

    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {}
    func commit(conflict: ConflictPolicy) async throws {}
    func abort() async {}
}

/// Commits with `.replace` whatever was asked.
struct ReplacingWrite: PendingWrite {
    let inner: any PendingWrite
    func write(_ bytes: [UInt8]) async throws { try await inner.write(bytes) }
    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {
        try await inner.setAttributes(permissions: permissions, modificationDate: modificationDate)
    }
    func commit(conflict: ConflictPolicy) async throws { try await inner.commit(conflict: .replace) }
    func abort() async { await inner.abort() }
}
