public import CofferCore

/// Opens a host file where it is, without copying it, and remembers it as a bookmark (the
/// same file opened again keeps its bookmark).
///
/// Fails with `hostAccessDenied` when the session's host access does not reach the file
/// (the container is never reached), `noSuchFile` when it is missing, `isADirectory` for
/// a folder, and `unsupported` on a service that keeps no bookmarks
/// (``HostSettings/bookmarksPath``).
public struct OpenHostFile: FileOperation {
    public static let name = "open"

    /// The host file opened.
    public var hostPath: String

    /// Opens the host file at `hostPath` in place.
    public init(_ hostPath: String) { self.hostPath = hostPath }

    public func run(in context: OperationContext) async throws(CofferError) -> OpenedHostFile {
        let opened = try await context.service.open(hostPath: hostPath, policy: context.session.hostPolicy)
        await context.service.noteUse(.host(opened.bookmark.hostPath))
        return opened
    }
}
