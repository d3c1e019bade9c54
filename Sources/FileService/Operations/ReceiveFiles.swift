public import CofferCore

/// Files handed to the application from outside — opened with it from a file manager —, each
/// opened in place or imported as the manifest's document types say
/// (`DocumentTypesManifest`'s `handling(of:folder:)`: a `Viewer` opens in place, an `Editor`
/// in place only with `supportsOpeningDocumentsInPlace`, folders are always copied).
///
/// A file whose type no document type claims, or claims with a role that opens nothing, is
/// refused with `typeNotAllowed` naming its type; a plain folder no type claims with
/// `isADirectory` (`not-a-document`); one that is gone fails with `noSuchFile`.
/// Imports go to `files:/Import`, keeping both names. Each import is audited as one entry.
/// Every file gets its own outcome; the operation itself does not fail.
public struct ReceiveFiles: FileOperation {
    public static let name = "receive"
    public static let changesFiles = true

    /// Where one file went.
    public enum Placement: Sendable {
        /// Opened where it is, with a bookmark to come back to it.
        case openedInPlace(OpenedHostFile)
        /// Copied into `files:/Import`: the copy.
        case imported(FileNode)
    }

    /// What became of one file handed over.
    public struct Received: Sendable {
        /// The host path it was handed over by.
        public var hostPath: String
        /// What the manifest said to do with it, once its type was known.
        public var handling: DocumentHandling?
        /// Where it went, or why it was refused or failed.
        public var outcome: Result<Placement, CofferError>
    }

    /// The files handed over, by their host paths.
    public var hostPaths: [String]
    /// The application's document types, which decide what is opened and how.
    public var manifest: DocumentTypesManifest

    /// Receives `hostPaths` as `manifest`'s document types say.
    public init(_ hostPaths: [String], manifest: DocumentTypesManifest) {
        self.hostPaths = hostPaths
        self.manifest = manifest
    }

    public func run(in context: OperationContext) async throws(CofferError) -> [Received] {
        var received: [Received] = []
        for hostPath in hostPaths {
            var item = Received(hostPath: hostPath, handling: nil, outcome: .failure(CofferError(.cancelled)))
            do throws(CofferError) {
                item.outcome = .success(try await receive(hostPath, context, deciding: &item.handling))
            } catch {
                item.outcome = .failure(error)
            }
            received.append(item)
        }
        return received
    }

    private func receive(_ hostPath: String, _ context: OperationContext,
                         deciding decision: inout DocumentHandling?) async throws(CofferError) -> Placement {
        let service = context.service, policy = context.session.hostPolicy
        let (isFolder, assessment) = try await service.assessHostItem(hostPath, policy: policy)
        guard let document = manifest.documentType(for: assessment.effective, in: service.registry),
              let handling = manifest.handling(of: document, folder: isFolder)
        else {
            // A plain folder is no document: said so, not called a file of a type not allowed.
            if isFolder && !service.registry.isPackage(folderNamed: HostAccess.lastComponent(of: hostPath)) {
                throw CofferError(.isADirectory, detail: "not-a-document")
            }
            throw CofferError(.typeNotAllowed, detail: assessment.effective)
        }
        decision = handling
        switch handling {
        case .openInPlace:
            return .openedInPlace(try await service.open(hostPath: hostPath, policy: policy))
        case .importCopy:
            let results = try await service.importItems(hostPaths: [hostPath], into: FileService.defaultImportFolder,
                                                        allowedTypes: [], conflict: .keepBoth, policy: policy,
                                                        progress: .none)
            return .imported(try results[0].outcome.get())
        }
    }

    /// One entry per import, where it landed (or the import folder when it failed); opening
    /// in place changes nothing in the sandbox, and a refusal copies nothing.
    public func auditRecords(for outcome: Result<[Received], CofferError>) -> [AuditRecord] {
        guard case .success(let received) = outcome else { return [] }
        return received.filter { $0.handling == .importCopy }.map { item in
            let landed = if case .success(.imported(let node)) = item.outcome { node.path } else { FileService.defaultImportFolder }
            return AuditRecord(paths: [landed.description], outcome: item.outcome)
        }
    }
}
