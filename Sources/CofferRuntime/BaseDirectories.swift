public import Foundation

/// The user's folders of the XDG Base Directory specification, each an absolute path from
/// its variable or, when that is unset or relative (which the specification says to ignore),
/// its default under `$HOME`.
public struct BaseDirectories: Sendable {
    /// `$XDG_DATA_HOME`, else `~/.local/share`: containers, desktop entries, MIME packages.
    public var dataHome: String
    /// `$XDG_STATE_HOME`, else `~/.local/state`: what a program remembers of its own doing.
    public var stateHome: String
    /// `$XDG_CONFIG_HOME`, else `~/.config`: settings, and GTK's bookmarks of favourite folders.
    public var configHome: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"] ?? NSHomeDirectory()
        func absolute(_ variable: String) -> String? { environment[variable].flatMap { $0.hasPrefix("/") ? $0 : nil } }
        dataHome = absolute("XDG_DATA_HOME") ?? home + "/.local/share"
        stateHome = absolute("XDG_STATE_HOME") ?? home + "/.local/state"
        configHome = absolute("XDG_CONFIG_HOME") ?? home + "/.config"
    }
}
