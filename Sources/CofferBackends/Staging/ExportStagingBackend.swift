public import CofferCore
public import Foundation

/// The export staging area, `Documents/ExportTemp`, mounted as `staging:` and never shown.
///
/// An export copies into a fresh stage (a folder of its own), hands the copy over, and
/// removes the stage; a stage left behind by a crash is removed when the container next
/// opens, once it is a day old. Everything else is the local backend's: the same
/// confinement and atomic writes.
public final class ExportStagingBackend: StorageBackend, ImmediateMetadata, Sendable {
    public let mountName: String
    let local: LocalSandboxBackend

    public init(path: String, mountName: String = "staging", registry: TypeRegistry = .standard,
                journal: OperationJournal? = nil) throws(CofferError) {
        self.mountName = mountName
        local = try LocalSandboxBackend(rootPath: path, registry: registry, syncBeforeCommit: false, journal: journal)
    }

    /// Creates an empty stage and returns its path (`staging:/stage-…`, or another `kind`'s).
    public func makeStage(kind: String = "stage") async throws(CofferError) -> VirtualPath {
        let path = VirtualPath.root(of: mountName).appending(trustedName: "\(kind)-\(UUID().uuidString)")
        do { try await local.createFolder(at: path) } catch { throw CofferError.wrapping(error, path: path) }
        return path
    }

    /// Removes a stage and everything in it.
    public func removeStage(_ stage: VirtualPath) async throws(CofferError) {
        guard stage.mount == mountName, stage.components.count == 1 else {
            throw CofferError(.invalidOperation, path: stage)
        }
        do { try await local.removeItem(at: stage) } catch { throw CofferError.wrapping(error, path: stage) }
    }

    /// Removes stages last changed before `cutoff` (of one `kind` only, when given). Returns how many.
    @discardableResult
    public func removeStages(olderThan cutoff: Date, kind: String? = nil) async throws(CofferError) -> Int {
        var removed = 0
        do {
            for node in try await local.contentsOfFolder(at: .root(of: mountName))
            where node.modificationDate < cutoff && (kind.map { node.name.hasPrefix($0 + "-") } ?? true) {
                try await local.removeItem(at: node.path)
                removed += 1
            }
        } catch {
            throw CofferError.wrapping(error)
        }
        return removed
    }

    public var capabilities: BackendCapabilities { local.capabilities }
    public var readsItemsByNameCheaply: Bool { local.readsItemsByNameCheaply }
    public func contentsOfFolder(at path: VirtualPath) async throws -> [FileNode] { try await local.contentsOfFolder(at: path) }
    public func node(at path: VirtualPath) async throws -> FileNode { try await local.node(at: path) }
    public func nodeImmediately(at path: VirtualPath) throws(CofferError) -> FileNode { try local.nodeSync(at: path) }
    public func createFolder(at path: VirtualPath) async throws { try await local.createFolder(at: path) }
    public func openFile(at path: VirtualPath) async throws -> any ReadableFile { try await local.openFile(at: path) }
    public func makeWrite(at path: VirtualPath) async throws -> any PendingWrite { try await local.makeWrite(at: path) }
    public func moveItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy) async throws {
        try await local.moveItem(at: source, to: destination, conflict: conflict)
    }
    public func removeItem(at path: VirtualPath) async throws { try await local.removeItem(at: path) }
    public func copyItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy,
                         progress: ProgressReporter) async throws {
        try await local.copyItem(at: source, to: destination, conflict: conflict, progress: progress)
    }
}

extension ExportStagingBackend: AttributeKeepingBackend {
    public func userAttributes(at path: VirtualPath) async throws -> UserAttributes {
        try await local.userAttributes(at: path)
    }

    public func setUserAttributes(_ attributes: UserAttributes, at path: VirtualPath) async throws -> [LostAttribute] {
        try await local.setUserAttributes(attributes, at: path)
    }

    public func removeUserAttributes(_ names: [String], at path: VirtualPath) async throws {
        try await local.removeUserAttributes(names, at: path)
    }

    public func userAttributes(ofItemsNamed names: [String], in folder: VirtualPath) async throws -> [String: UserAttributes] {
        try await local.userAttributes(ofItemsNamed: names, in: folder)
    }
}

extension ExportStagingBackend: HostPathNaming {
    public func hostPath(of path: VirtualPath) -> String { local.hostPath(of: path) }
}
