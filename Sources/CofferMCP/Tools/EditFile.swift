import CofferCore
import FileService
import Foundation

struct EditFile: MCPTool {
    static let name = "edit_file"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        var edits: [TextEdit] = []
        for (index, item) in try arguments.array("edits").enumerated() {
            guard let old = item["oldText"]?.string, let new = item["newText"]?.string else {
                throw CofferError(.invalidArgument, detail: "edit \(index + 1) needs “oldText” and “newText” strings")
            }
            guard !old.isEmpty else { throw CofferError(.invalidArgument, detail: "edit \(index + 1) has an empty “oldText”") }
            edits.append(TextEdit(oldText: old, newText: new))
        }
        let dryRun = try arguments.bool("dryRun")
        let wanted = try arguments.version()
        let piece = try await TextReading.read(path, head: nil, tail: nil, offset: nil, length: nil, context)
        if let wanted, piece.version != wanted {
            throw CofferError.changedSinceRead(path, now: try? await context.perform(StatItem(path)))
        }
        let original = piece.text
        let usesCRLF = original.contains("\r\n")
        let before = TextEditing.normalized(original)
        let after: String
        do {
            after = try TextEditing.apply(edits, to: before)
        } catch {
            throw CofferError(.invalidArgument, detail: Self.describe(error, language: context.language))
        }
        let shown = context.paths.display(path, style)
        let diff = UnifiedDiff.make(from: before, to: after, name: shown)
        if !dryRun, after != before {
            let written = usesCRLF ? after.replacingOccurrences(of: "\n", with: "\r\n") : after
            // Saved over exactly the text the edits were applied to: a write by another
            // program in between makes it `changedSinceRead`, never lost.
            // The session keeps the file's encoding (GB 18030, UTF-16…) as every front end's save does.
            _ = try await context.perform(SaveText(.file(path), text: Array(written.utf8), ifVersion: piece.version))
        }
        return ToolOutput(text: "```diff\n\(diff)```\n", fields: ["diff": .string(diff), "applied": .bool(!dryRun && after != before)])
    }

    /// Which edit did not match, and what in the file comes closest.
    static func describe(_ mismatch: EditMismatch, language: Language) -> String {
        let quoted = String(mismatch.oldText.prefix(500))
        var text = LocalizedText("edit \(mismatch.index) of \(mismatch.count) matches nothing in the file; its oldText was:\n\(quoted)",
                                 "第 \(mismatch.index) 处修改（共 \(mismatch.count) 处）在文件中找不到；其 oldText 为：\n\(quoted)")(language)
        if let closest = mismatch.closest {
            let percent = Int((closest.likeness * 100).rounded())
            text += LocalizedText("\nThe closest text (line \(closest.line), \(percent)% alike) is:\n\(closest.text)",
                                  "\n最接近的文本（第 \(closest.line) 行，相似度 \(percent)%）为：\n\(closest.text)")(language)
        }
        return text + LocalizedText("\nNothing was changed", "\n文件未作任何修改")(language)
    }
}
