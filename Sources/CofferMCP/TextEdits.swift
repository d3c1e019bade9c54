import Foundation

/// One `edit_file` edit: the text to find and what replaces it.
struct TextEdit: Sendable, Hashable {
    var oldText: String
    var newText: String
}

/// An edit that found nothing to replace: which one, and the text most like it.
struct EditMismatch: Error, Sendable {
    var index: Int
    var count: Int
    var oldText: String
    /// The closest lines: where they start (from 1), the text, and how alike (0…1).
    var closest: (line: Int, text: String, likeness: Double)?
}

/// Applying edits to text, as the reference server's `edit_file` does: each edit replaces
/// the first place its `oldText` appears; failing that, lines that match it apart from
/// their leading and trailing white space, keeping the file's indentation. Line endings are
/// compared as `\n` (a CRLF file is written back with CRLF). All the edits apply, or none.
enum TextEditing {
    static func apply(_ edits: [TextEdit], to text: String) throws(EditMismatch) -> String {
        var content = text
        for (index, edit) in edits.enumerated() {
            let old = normalized(edit.oldText), new = normalized(edit.newText)
            if let range = content.range(of: old) {
                content.replaceSubrange(range, with: new)
            } else if let replaced = replacingLoosely(old, with: new, in: content) {
                content = replaced
            } else {
                throw EditMismatch(index: index + 1, count: edits.count, oldText: edit.oldText,
                                   closest: closest(to: old, in: content))
            }
        }
        return content
    }

    static func normalized(_ text: String) -> String { text.replacingOccurrences(of: "\r\n", with: "\n") }

    /// Lines equal to `old`'s apart from surrounding white space, replaced by `new`'s lines
    /// indented as the first line found was.
    static func replacingLoosely(_ old: String, with new: String, in content: String) -> String? {
        let oldLines = lines(old)
        guard !oldLines.isEmpty, oldLines.contains(where: { !trimmed($0).isEmpty }) else { return nil }
        var contentLines = content.components(separatedBy: "\n")
        let wanted = oldLines.map(trimmed)
        guard contentLines.count >= wanted.count else { return nil }
        for start in 0...(contentLines.count - wanted.count) {
            guard (0..<wanted.count).allSatisfy({ trimmed(contentLines[start + $0]) == wanted[$0] }) else { continue }
            // Each line of `old` against the line of the file it matched: the file's
            // indentation replaces the edit's, line by line (the last pair for added lines).
            let indents = (0..<wanted.count).map { (leadingSpace(oldLines[$0]), leadingSpace(contentLines[start + $0])) }
            let replacement = lines(new).enumerated().map { offset, line -> String in
                let (given, kept) = indents[min(offset, indents.count - 1)]
                return line.hasPrefix(given) ? kept + line.dropFirst(given.count) : line
            }
            contentLines.replaceSubrange(start..<(start + wanted.count), with: replacement)
            return contentLines.joined(separator: "\n")
        }
        return nil
    }

    private static func lines(_ text: String) -> [String] {
        var parts = text.components(separatedBy: "\n")
        if parts.count > 1, parts.last == "" { parts.removeLast() }
        return parts
    }

    private static func trimmed(_ line: String) -> String { line.trimmingCharacters(in: .whitespaces) }

    private static func leadingSpace(_ line: String) -> String { String(line.prefix(while: { $0 == " " || $0 == "\t" })) }

    /// The run of lines most like `old` (as many lines as it has), by the share of
    /// three-character pieces they have in common. Bounded: a huge file is sampled.
    static func closest(to old: String, in content: String) -> (line: Int, text: String, likeness: Double)? {
        let wanted = trigrams(old)
        guard !wanted.isEmpty else { return nil }
        let contentLines = content.components(separatedBy: "\n")
        let size = max(1, lines(old).count)
        guard contentLines.count >= size else { return nil }
        let windows = contentLines.count - size + 1
        let step = max(1, windows * size / 400_000)
        var best: (line: Int, likeness: Double)?
        for start in stride(from: 0, to: windows, by: step) {
            let candidate = trigrams(contentLines[start..<(start + size)].joined(separator: "\n"))
            guard !candidate.isEmpty else { continue }
            let shared = wanted.intersection(candidate).count
            let likeness = Double(shared) / Double(wanted.union(candidate).count)
            if likeness > (best?.likeness ?? 0) { best = (start, likeness) }
        }
        guard let best, best.likeness > 0 else { return nil }
        return (best.line + 1, contentLines[best.line..<(best.line + size)].joined(separator: "\n"), best.likeness)
    }

    private static func trigrams(_ text: String) -> Set<String> {
        let characters = Array(text.lowercased().filter { !$0.isWhitespace })
        guard characters.count >= 3 else { return characters.isEmpty ? [] : [String(characters)] }
        var pieces = Set<String>()
        for index in 0...(characters.count - 3) { pieces.insert(String(characters[index..<(index + 3)])) }
        return pieces
    }
}

/// A unified diff of two texts, three lines of context, as `diff -u` writes it.
enum UnifiedDiff {
    static func make(from old: String, to new: String, name: String) -> String {
        let a = old.components(separatedBy: "\n"), b = new.components(separatedBy: "\n")
        let script = edits(a, b)
        var output = "--- \(name)\toriginal\n+++ \(name)\tmodified\n"
        // Hunks: runs of changes with up to three unchanged lines around them.
        var index = 0
        while index < script.count {
            guard script[index] != .same else { index += 1; continue }
            var end = index
            var lastChange = index
            while end < script.count {
                if script[end] != .same { lastChange = end }
                if end - lastChange > 6 { break }
                end += 1
            }
            let hunkStart = max(0, index - 3)
            let hunkEnd = min(script.count, lastChange + 4)
            output += hunk(script, hunkStart..<hunkEnd, a, b)
            index = hunkEnd
        }
        return output
    }

    enum Step: Equatable { case same, delete, insert }

    /// The shortest edit script turning `a` into `b`: common ends kept, the middle by
    /// longest common subsequence (a replaced block when the middle is huge).
    static func edits(_ a: [String], _ b: [String]) -> [Step] {
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let x = Array(a[prefix..<(a.count - suffix)]), y = Array(b[prefix..<(b.count - suffix)])
        var middle: [Step] = []
        if x.count * y.count > 4_000_000 || x.isEmpty || y.isEmpty {
            middle = Array(repeating: .delete, count: x.count) + Array(repeating: .insert, count: y.count)
        } else {
            // lengths[i][j]: the LCS of x[i...] and y[j...].
            let width = y.count + 1
            var lengths = [Int32](repeating: 0, count: (x.count + 1) * width)
            for i in stride(from: x.count - 1, through: 0, by: -1) {
                for j in stride(from: y.count - 1, through: 0, by: -1) {
                    lengths[i * width + j] = x[i] == y[j] ? lengths[(i + 1) * width + j + 1] + 1
                        : max(lengths[(i + 1) * width + j], lengths[i * width + j + 1])
                }
            }
            var i = 0, j = 0
            while i < x.count || j < y.count {
                // Deletions before insertions, as `diff -u` shows a changed line.
                if i < x.count, j < y.count, x[i] == y[j] {
                    middle.append(.same); i += 1; j += 1
                } else if i < x.count, j == y.count || lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
                    middle.append(.delete); i += 1
                } else {
                    middle.append(.insert); j += 1
                }
            }
        }
        return Array(repeating: .same, count: prefix) + middle + Array(repeating: .same, count: suffix)
    }

    private static func hunk(_ script: [Step], _ range: Range<Int>, _ a: [String], _ b: [String]) -> String {
        // Where the hunk starts in each text.
        var oldLine = 0, newLine = 0
        for step in script[..<range.lowerBound] {
            if step != .insert { oldLine += 1 }
            if step != .delete { newLine += 1 }
        }
        var body = ""
        var oldCount = 0, newCount = 0
        var i = oldLine, j = newLine
        for step in script[range] {
            switch step {
            case .same: body += " \(a[i])\n"; i += 1; j += 1; oldCount += 1; newCount += 1
            case .delete: body += "-\(a[i])\n"; i += 1; oldCount += 1
            case .insert: body += "+\(b[j])\n"; j += 1; newCount += 1
            }
        }
        return "@@ -\(oldLine + (oldCount > 0 ? 1 : 0)),\(oldCount) +\(newLine + (newCount > 0 ? 1 : 0)),\(newCount) @@\n" + body
    }
}
