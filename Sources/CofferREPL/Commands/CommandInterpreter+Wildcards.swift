import CofferCore
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Wildcards as the sftp shell has them: in every operand that names Coffer paths, `*`, `?`
/// and `[…]` outside quotes are matched against the names in the folders they stand in
/// (`ls *.txt`, `cp Photos/*.png Import`, `rm Old/*/cache`), in name order; quoted or escaped,
/// they are plain characters. A leading `.` is matched only by a pattern that starts with one.
/// A pattern that matches nothing is an error that says so, and the command does not run.
extension CommandInterpreter {
    /// The words of a command with its operands' wildcards expanded (``CommandSyntax``
    /// decides which words are operands naming Coffer paths; flags and their values never are).
    func expandingWildcards(_ words: [CommandLineSplitter.Word]) async throws(CofferError) -> [String] {
        guard let name = words.first?.text, let syntax = CommandHelp.named(name)?.syntax,
              words.contains(where: { $0.pattern != nil }) else { return words.map(\.text) }
        var expanded = [name]
        var operandIndex = 0
        var takesValue = false
        var flagsEnded = false
        for word in words.dropFirst() {
            if takesValue {
                takesValue = false
                expanded.append(word.text)
                continue
            }
            if !flagsEnded && word.text == "--" {
                flagsEnded = true
                expanded.append(word.text)
                continue
            }
            if !flagsEnded && word.text.hasPrefix("-") && word.text != "-" {
                takesValue = syntax.valueKind(after: word.text) != nil && !word.text.contains("=")
                expanded.append(word.text)
                continue
            }
            let kind = syntax.operand(at: operandIndex)
            operandIndex += 1
            guard let pattern = word.pattern, kind == .sandboxPath || kind == .sandboxFolder else {
                expanded.append(word.text)
                continue
            }
            expanded += try await matches(of: pattern, shown: word.text)
        }
        return expanded
    }

    /// The paths `pattern` matches, written as the user wrote the part before the first
    /// wildcard, so that messages and listings name them as typed.
    private func matches(of pattern: String, shown: String) async throws(CofferError) -> [String] {
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.firstIndex(where: Self.hasWildcard) else { return [Self.unescaped(pattern)] }
        // The folder the wildcards start in, as typed (`Docs`, `/Docs`, `files:`, or here).
        var typed = Self.unescaped(parts[..<first].joined(separator: "/"))
        if first > 0 && typed.isEmpty { typed = "/" }
        if typed.hasSuffix(":") { typed += "/" }
        let start = typed.isEmpty ? currentFolder : try resolve(typed)
        var found: [(path: VirtualPath, typed: String)] = [(start, typed)]
        for (index, part) in parts.enumerated().dropFirst(first) {
            let last = index == parts.count - 1
            if part.isEmpty { continue }  // a trailing slash
            var next: [(path: VirtualPath, typed: String)] = []
            for (folder, text) in found {
                let joined = { (name: String) in text.isEmpty || text.hasSuffix("/") ? text + name : text + "/" + name }
                guard Self.hasWildcard(part) else {
                    let name = Self.unescaped(part)
                    next.append((try folder.appending(name), joined(name)))
                    continue
                }
                // A folder that cannot be listed (or is no folder) matches nothing in it.
                guard let items = try? await session.perform(ListFolder(folder, options: ListOptions(includeHidden: true, order: .byName)))
                else { continue }
                let glob = try Glob(part, syntax: .shell)
                for item in items.items where glob.matches(item.name) && (last || item.kind != .file) {
                    if Task.isCancelled { throw CofferError(.cancelled) }
                    next.append((item.path, joined(item.name)))
                }
            }
            found = next
        }
        guard !found.isEmpty else {
            throw CofferError(.invalidArgument, detail: LocalizedText("nothing matches “\(shown)”", "没有与“\(shown)”匹配的项目")(language))
        }
        // A name that starts with `-` is never read as an option.
        return found.map { $0.typed.hasPrefix("-") ? "./" + $0.typed : $0.typed }
    }

    static func hasWildcard(_ part: String) -> Bool { Glob.hasWildcard(part, syntax: .shell) }

    /// A pattern's literal part with its escapes removed (`\*` → `*`).
    static func unescaped(_ part: String) -> String {
        var text = ""
        var escaped = false
        for character in part {
            if !escaped && character == "\\" { escaped = true; continue }
            escaped = false
            text.append(character)
        }
        return text
    }
}
