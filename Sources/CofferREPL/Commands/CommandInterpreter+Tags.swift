import CofferCore
import CofferRuntime
import FileService

/// Tags at the prompt: `tag` and `tags`.
extension CommandInterpreter {
    /// `tag path… +tag -tag…`: adds (`+`) and removes (`-`) tags; prints each item's tags
    /// after. `--` ends the tags, for a path that starts with `+` or `-`.
    func tag(_ words: ArraySlice<String>) async throws {
        var adding: [String] = [], removing: [String] = [], operands: [String] = []
        var tagsEnded = false
        for word in words {
            if !tagsEnded && word == "--" {
                tagsEnded = true
            } else if !tagsEnded && word.count > 1 && word.hasPrefix("+") {
                adding.append(String(word.dropFirst()))
            } else if !tagsEnded && word.count > 1 && word.hasPrefix("-") {
                removing.append(String(word.dropFirst()))
            } else {
                operands.append(word)
            }
        }
        guard !operands.isEmpty, !(adding.isEmpty && removing.isEmpty) else { throw usage("tag") }
        let paths = try operands.map { (text) throws(CofferError) in try resolve(text) }
        var failed = false
        for (path, outcome) in try await perform(TagItems(paths, adding: adding, removing: removing)) {
            switch outcome {
            case .success(let tags):
                output.line("\(shown(path.description)): \(tags.isEmpty ? "-" : shown(tags.joined(separator: ", ")))")
            case .failure(let error):
                report(error)
                failed = true
            }
        }
        if failed { throw Reported() }
    }

    /// `tags [folder]`: every tag in use, most used first, with how many items carry it.
    func listTags(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "tags")
        guard arguments.operands.count <= 1 else { throw usage("tags") }
        let folder = try arguments.operands.first.map { (text) throws(CofferError) in try resolve(text) } ?? .root()
        let counts = try await perform(CountTags(below: folder))
        guard !counts.isEmpty else {
            output.line(LocalizedText("No tags yet; “tag PATH +NAME” adds one.", "还没有标签；用“tag 路径 +名称”添加。")(language))
            return
        }
        let width = counts.map { Formatting.width(shown($0.tag)) }.max() ?? 0
        for (tag, count) in counts { output.line("\(Formatting.padded(shown(tag), to: width))  \(count)") }
    }
}
