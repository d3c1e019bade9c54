import CofferCore
import FileService
import Foundation

/// A bounded search of text files' contents: only files that read as text (the encoding
/// detected as `read_text_file` detects it), at most 4 MiB of each, at most `maxResults`
/// lines, at most 20,000 items walked. What was passed over is counted, not hidden.
struct SearchFileContents: MCPTool {
    static let name = "search_file_contents"
    static let bytesPerFile = 4 << 20

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (root, style) = try await context.path(arguments, "path")
        let query = try arguments.string("query")
        guard !query.isEmpty else { throw CofferError(.invalidArgument, detail: "“query” is empty") }
        let caseSensitive = try arguments.bool("caseSensitive")
        let maxResults = Int(try arguments.optionalInteger("maxResults", minimum: 1) ?? 100)
        guard maxResults <= 1000 else { throw CofferError(.invalidArgument, detail: "“maxResults” must be at most 1000") }
        let filter = try arguments.optionalString("filePattern").map { text throws(CofferError) in try Globs(patterns: [text]) }
        let exclude = try Globs(patterns: try arguments.optionalStrings("excludePatterns"))
        var matches: [JSONValue] = []
        var lines: [String] = []
        var searched = 0
        var skipped = 0
        var truncated = false
        let options: String.CompareOptions = caseSensitive ? [] : [.caseInsensitive]
        let walkTruncated = try await walkTree(root, excluding: { exclude.matches(relative: $0, name: $1) }, context) { (node, relative, _) async throws(CofferError) in
            guard matches.count < maxResults, node.kind == .file, node.special == nil else { return }
            if let filter, !filter.matches(relative: relative, name: node.name) { return }
            let content: ReadRange.Content
            do throws(CofferError) {
                content = try await context.perform(ReadRange(node.path, length: Self.bytesPerFile, as: .text))
            } catch {
                if error.kind == .cancelled { throw error }
                skipped += 1
                return
            }
            guard case .text(let text) = content else { return }
            searched += 1
            if !text.isEndOfFile { truncated = true }
            var number = 0
            text.text.enumerateLines { line, stop in
                number += 1
                guard line.range(of: query, options: options) != nil else { return }
                let shown = String(line.prefix(300))
                let where_ = context.paths.display(node.path, style)
                matches.append(["path": .string(where_), "line": JSONValue(number), "text": .string(shown)])
                lines.append("\(where_):\(number): \(shown)")
                if matches.count >= maxResults {
                    truncated = true
                    stop = true
                }
            }
        }
        if walkTruncated { truncated = true }
        var text = lines.isEmpty ? "No matches found" : lines.joined(separator: "\n")
        text += "\n(\(searched) text files searched, \(skipped) skipped\(truncated ? "; stopped at a limit" : ""))"
        return ToolOutput(text: text, fields: [
            "matches": .array(matches), "filesSearched": JSONValue(searched), "filesSkipped": JSONValue(skipped),
            "truncated": .bool(truncated),
        ])
    }
}
