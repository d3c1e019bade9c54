import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The lines a person typed, most recent last: bounded, without blank lines and without
/// the same line twice in a row.
public struct History: Sendable, Equatable {
    public private(set) var entries: [String] = []
    /// How many entries are kept; older ones are dropped first.
    public let limit: Int

    public init(limit: Int = 1000) {
        self.limit = max(1, limit)
    }

    /// A history of `lines`, cleaned as if each had been added in turn.
    public init(_ lines: some Sequence<String>, limit: Int = 1000) {
        self.init(limit: limit)
        for line in lines { add(line) }
    }

    /// Adds `line` unless it is blank or repeats the last entry.
    /// - Returns: whether it was added.
    @discardableResult
    public mutating func add(_ line: String) -> Bool {
        let flat = line.contains(where: \.isNewline)
            ? line.split(whereSeparator: \.isNewline).joined(separator: " ") : line
        guard !flat.allSatisfy(\.isWhitespace), flat != entries.last else { return false }
        entries.append(flat)
        if entries.count > limit { entries.removeFirst(entries.count - limit) }
        return true
    }
}

/// The history kept in a file (`AppData/history`), one line per entry.
///
/// Each accepted line is appended at once, so nothing is lost if the REPL is killed, and
/// two sessions at the same time both keep theirs. When the file has grown past twice
/// the limit, loading rewrites it (atomically) with only the entries kept.
public struct HistoryFile: Sendable {
    public let path: String
    public let limit: Int

    public init(path: String, limit: Int = 1000) {
        self.path = path
        self.limit = limit
    }

    /// The saved history; empty when there is none or it cannot be read.
    public func load() -> History {
        guard let data = FileManager.default.contents(atPath: path) else { return History(limit: limit) }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
        let history = History(lines.map(String.init), limit: limit)
        if lines.count > 2 * limit { rewrite(history) }
        return history
    }

    /// Appends one entry; failures (a read-only container) are ignored: history is a convenience.
    public func append(_ line: String) {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Replaces the file with `history`'s entries.
    public func rewrite(_ history: History) {
        let text = history.entries.map { $0 + "\n" }.joined()
        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8),
                                             attributes: [.posixPermissions: 0o600]) else { return }
        if rename(temporary, path) != 0 { unlink(temporary) }
    }
}
