import CofferDesktop
public import CofferCore

/// The files Coffer used (opened in place, edited, imported, exported, downloaded), newest
/// first, from the desktop's recent-files list: this container's by their virtual paths, and
/// files of this computer the session's host access reaches; never another container's.
public struct ListRecentFiles: FileOperation {
    public static let name = "recent"
    /// Lists the recent files; empty on a service without ``Recents``.
    public init() {}
    public func run(in context: OperationContext) async throws(CofferError) -> [RecentFile] {
        await context.service.feature(Recents.self)?.files(of: context.service, reachableBy: context.session.hostPolicy) ?? []
    }
}
