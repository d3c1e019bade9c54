#if canImport(Glibc)
import Glibc
#endif

/// ANSI colours for a terminal, or nothing at all.
///
/// Colour is for people: it is on only when the output is a terminal, `TERM` is not
/// `dumb`, and `NO_COLOR` is unset or empty (https://no-color.org).
public struct TextStyle: Sendable, Equatable {
    public var isEnabled: Bool

    public init(isEnabled: Bool) { self.isEnabled = isEnabled }

    /// No colour.
    public static let plain = TextStyle(isEnabled: false)
    /// Colour, whatever the output is (for tests).
    public static let colored = TextStyle(isEnabled: true)

    /// Colour for descriptor `fd` under `environment`'s rules.
    public static func forDescriptor(_ fd: Int32, environment: [String: String]) -> TextStyle {
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let dumb = environment["TERM"] == "dumb"
        return TextStyle(isEnabled: isatty(fd) == 1 && !noColor && !dumb)
    }

    /// Folders: bold blue.
    public func folder(_ text: String) -> String { paint(text, "1;34") }
    /// Links and other special items: cyan.
    public func special(_ text: String) -> String { paint(text, "36") }
    /// Packages: bold magenta, so they stand apart from both folders and files.
    public func package(_ text: String) -> String { paint(text, "1;35") }
    /// The marker of an error message: bold red.
    public func error(_ text: String) -> String { paint(text, "1;31") }
    /// The prompt's location: bold.
    public func emphasis(_ text: String) -> String { paint(text, "1") }

    private func paint(_ text: String, _ code: String) -> String {
        isEnabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
