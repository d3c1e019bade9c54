/// A backend whose storage has symbolic links, and that can say where a path leads once
/// the links along it are followed — without ever leaving its root.
///
/// Coffer's own operations never follow links (a link is an item like any other). A front end
/// that must behave as another program does — MCP's tools, which act on what a path *leads to*
/// as the reference filesystem server does — asks here first, then acts on the answer with the
/// usual, link-refusing operations: a link swapped in between makes the operation fail, never
/// escape.
public protocol LinkResolvingBackend: StorageBackend {
    /// `path` with every link along it followed, as a path of the same mount.
    /// - Throws: `outsideSandbox` naming `path` (never where the link points) when a link
    ///   leads outside the root; `unsupported` after 40 links (a loop).
    func resolvingLinks(_ path: VirtualPath) async throws(CofferError) -> VirtualPath
}
