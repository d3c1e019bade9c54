/// Which paths of the host machine a session may import from, export to and open in place.
///
/// A person at the REPL may name anything their account can read; a program gets only the
/// folders allowed when Coffer was started; a service built in code, nothing. Whatever a
/// session asks for, the container itself is never a host path: the service takes it out.
public enum HostAccess: Sendable, Hashable {
    /// Anything the account can read.
    case anywhere
    /// Only inside these folders (each must exist and be a folder).
    case only([String])
    /// Nothing.
    case nowhere

    /// How an error names a host item: `host:/NAME`, by its last component, never by its
    /// folders (`nil` for `/`).
    public static func shownPath(_ hostPath: String) -> VirtualPath? {
        try? VirtualPath.root(of: "host").appending(lastComponent(of: hostPath))
    }

    /// The last component of a host path, ignoring one trailing `/`: what messages name
    /// instead of the whole path.
    public static func lastComponent(of path: String) -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        return trimmed.split(separator: "/").last.map(String.init) ?? trimmed
    }
}
