import CofferCore
import Foundation

/// Reads the paths MCP clients send, and writes paths back the way they were sent.
///
/// A client of the official filesystem server sends absolute host paths inside its allowed
/// directory; for Coffer that directory is the host path of the `files:` root, so
/// `/home/me/.local/share/coffer/Documents/UserFiles/notes/a.md` is `files:/notes/a.md`.
/// Coffer's own virtual paths (`files:/notes/a.md`, `trash:`, another mount) are accepted
/// too, and a relative path is inside `files:`. Only the spelling is decided here: the
/// path is turned into a ``VirtualPath`` lexically (`..` may not climb above the root),
/// and the backend then opens it below its root without following links out, so nothing
/// a client writes reaches a host file outside the mount.
struct PathResolver: Sendable {
    /// How a path was written, and so how answers write paths.
    enum Style: Sendable { case host, virtual }

    /// The `files:` root as given, and as `realpath` gives it (a client may send either).
    let filesRoot: String
    let canonicalRoot: String
    private let home: String?

    /// A relative `filesRoot` (from a relative `--container`) is made absolute from the working
    /// directory: every answer writes absolute paths, which a client can send back from anywhere.
    init(filesRoot: String, home: String? = ProcessInfo.processInfo.environment["HOME"]) {
        let absolute = filesRoot.hasPrefix("/") ? filesRoot : URL(fileURLWithPath: filesRoot).standardizedFileURL.path
        let trimmed = absolute.count > 1 && absolute.hasSuffix("/") ? String(absolute.dropLast()) : absolute
        self.filesRoot = trimmed
        self.canonicalRoot = realpath(trimmed, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? trimmed
        self.home = home
    }

    /// The virtual path a client's path names, and how it was written.
    /// - Throws: `outsideSandbox` for a host path outside the `files:` root or a `..` that
    ///   climbs above it; `invalidName` for a NUL byte or an over-long name; `invalidArgument`
    ///   for an empty path.
    func resolve(_ text: String) throws(CofferError) -> (path: VirtualPath, style: Style) {
        guard !text.isEmpty else { throw CofferError(.invalidArgument, detail: "empty path") }
        var text = text
        if text == "~" || text.hasPrefix("~/"), let home { text = home + text.dropFirst() }
        guard text.hasPrefix("/") else { return (try VirtualPath(parsing: text), .virtual) }
        for root in [filesRoot, canonicalRoot] where root == "/" || text == root || text.hasPrefix(root + "/") {
            let inside = root == "/" ? text : String(text.dropFirst(root.count))
            return (try VirtualPath(parsing: inside.isEmpty ? "/" : inside), .host)
        }
        // Not a link leading out: simply a place the client may not name.
        throw CofferError(.outsideSandbox, detail: "outside-allowed-directory")
    }

    /// `path` written in `style`: a host path for `files:` when the client wrote host paths,
    /// the virtual path otherwise (other mounts have no host path to show).
    func display(_ path: VirtualPath, _ style: Style) -> String {
        guard style == .host, path.mount == VirtualPath.defaultMount else { return path.description }
        return path.isRoot ? filesRoot : filesRoot + path.absoluteString
    }
}
