import CofferRuntime
import Foundation

/// The user's `mimeapps.list` (`$XDG_CONFIG_HOME/mimeapps.list`, freedesktop.org's MIME
/// applications associations specification): where `install-desktop` offers the application
/// for the types it opens only as an alternative (rank `Alternate`).
///
/// A type listed in an entry's `MimeType=` makes that application the default wherever no
/// other claims the type: installing a viewer would take over folders, PDFs or text files. An
/// added association instead puts the application in "Open With" *after* the applications
/// listed before it; so that the one the desktop opens the type with today stays first, it is
/// written ahead of ours when the type had no added association yet. Everything else in the
/// file is kept as it was; the file is replaced whole (a temporary file, then a rename).
public struct MimeAppsList {
    static let addedGroup = "[Added Associations]"

    public let path: String
    public private(set) var lines: [String]

    /// The user's list, at `$XDG_CONFIG_HOME/mimeapps.list` (else `~/.config/mimeapps.list`),
    /// empty when there is none.
    public init(environment: [String: String]) {
        self.init(path: BaseDirectories(environment: environment).configHome + "/mimeapps.list")
    }

    /// The list at `path`, empty when there is none.
    public init(path: String) {
        self.path = path
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
    }

    /// The added associations of `type`, most preferred first.
    public func added(for type: String) -> [String] {
        guard let index = lineIndex(of: type) else { return [] }
        return Self.entries(lines[index])
    }

    /// Adds `application` at the end of `type`'s added associations. When `type` has none yet,
    /// `current` (the application the desktop opens it with now, if any) is written first.
    /// - Returns: whether anything changed.
    @discardableResult
    public mutating func add(_ application: String, for type: String, after current: String?) -> Bool {
        var entries = added(for: type)
        guard !entries.contains(application) else { return false }
        if entries.isEmpty, let current, !current.isEmpty, current != application { entries.append(current) }
        entries.append(application)
        set(entries, for: type)
        return true
    }

    /// Takes `application` out of every added association (a type left with none goes), and
    /// with it the application ``add(_:for:after:)`` wrote ahead of it (`writtenFirst`, per
    /// type) where that is all the type is left with: the list is as it was before.
    /// - Returns: whether anything changed.
    @discardableResult
    public mutating func remove(_ application: String, withWrittenFirst writtenFirst: [String: String] = [:]) -> Bool {
        guard let group = groupIndex() else { return false }
        var changed = false
        var index = group + 1
        while index < lines.count, !lines[index].hasPrefix("[") {
            if let type = Self.key(lines[index]) {
                let entries = Self.entries(lines[index])
                if entries.contains(application) {
                    changed = true
                    var kept = entries.filter { $0 != application }
                    if let first = writtenFirst[type], kept == [first] { kept = [] }
                    if kept.isEmpty {
                        lines.remove(at: index)
                        continue
                    }
                    lines[index] = Self.line(type, kept)
                }
            }
            index += 1
        }
        // A group left with no entry goes too, and the blank lines around it.
        var end = group + 1
        while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces).isEmpty { end += 1 }
        if changed, end == lines.count || lines[end].hasPrefix("[") {
            var start = group
            while start > 0, lines[start - 1].trimmingCharacters(in: .whitespaces).isEmpty { start -= 1 }
            lines.replaceSubrange(start..<end, with: start > 0 && end < lines.count ? [""] : [])
        }
        return changed
    }

    /// Writes the file: whole, under a temporary name beside it, then renamed into place.
    /// Whether nothing but blank lines is left.
    public var isEmpty: Bool { lines.allSatisfy { $0.trimmingCharacters(in: .whitespaces).isEmpty } }

    public func write() throws {
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    // MARK: Lines

    private func groupIndex() -> Int? { lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == Self.addedGroup } }

    private func lineIndex(of type: String) -> Int? {
        guard let group = groupIndex() else { return nil }
        var index = group + 1
        while index < lines.count, !lines[index].hasPrefix("[") {
            if Self.key(lines[index]) == type { return index }
            index += 1
        }
        return nil
    }

    private mutating func set(_ entries: [String], for type: String) {
        if let index = lineIndex(of: type) {
            lines[index] = Self.line(type, entries)
            return
        }
        if let group = groupIndex() {
            var end = group + 1
            while end < lines.count, !lines[end].hasPrefix("[") { end += 1 }
            // After the group's last entry, before the blank lines that end it.
            while end > group + 1, lines[end - 1].trimmingCharacters(in: .whitespaces).isEmpty { end -= 1 }
            lines.insert(Self.line(type, entries), at: end)
        } else {
            if let last = lines.last, !last.isEmpty { lines.append("") }
            lines += [Self.addedGroup, Self.line(type, entries)]
        }
    }

    /// Every group's entries (`[Default Applications]`, `[Added Associations]`…): type → IDs.
    public var groups: [String: [String: [String]]] {
        var groups: [String: [String: [String]]] = [:]
        var group = ""
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") { group = String(trimmed.dropFirst().dropLast()); continue }
            guard let type = Self.key(trimmed) else { continue }
            groups[group, default: [:]][type] = Self.entries(trimmed)
        }
        return groups
    }

    private static func key(_ line: String) -> String? {
        guard let equals = line.firstIndex(of: "="), !line.hasPrefix("#") else { return nil }
        return line[..<equals].trimmingCharacters(in: .whitespaces)
    }

    private static func entries(_ line: String) -> [String] {
        guard let equals = line.firstIndex(of: "=") else { return [] }
        return line[line.index(after: equals)...].split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    private static func line(_ type: String, _ entries: [String]) -> String {
        type + "=" + entries.map { $0 + ";" }.joined()
    }
}
