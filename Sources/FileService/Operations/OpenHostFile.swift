public import CofferCore

/// Opens a host file where it is, without copying it, and remembers it as a bookmark (the
/// same file opened again keeps its bookmark).
public struct OpenHostFile: FileOperation {
    public static let name = "open"

    public var hostPath: String

    public init(_ hostPath: String) { self.hostPath = hostPath }

    public func run(in context: OperationContext) async throws(CofferError) -> OpenedHostFile {
        let opened = try await context.service.open(hostPath: hostPath, policy: context.session.hostPolicy)
        await context.service.noteUse(.host(opened.bookmark.hostPath))
        return opened
    }
}
