import Foundation

/// Which tools `tools/list` offers and `tools/call` answers (`coffer mcp --tools`), and whether
/// their listings carry output schemas (`--structured`).
///
/// Every conversation pays for the tool list in tokens, so the default list is lean: the
/// reference server's tools and Coffer's, without output schemas (results still carry
/// `structuredContent`). `official` offers the reference server's 14 alone; names choose tools
/// one by one.
public struct ToolChoice: Sendable, Hashable {
    /// The names offered; `nil` for every tool.
    public let names: Set<String>?
    /// Whether each listing has its `outputSchema`.
    public var structured: Bool

    public static let all = ToolChoice(names: nil, structured: false)

    /// The reference filesystem server's tools, by the names it gives them.
    public static let referenceTools: Set<String> = [
        "read_text_file", "read_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
        "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file", "search_files",
        "get_file_info", "list_allowed_directories",
    ]

    init(names: Set<String>?, structured: Bool) {
        self.names = names
        self.structured = structured
    }

    /// `all`, `official`, or tool names separated by commas.
    /// - Throws: a message naming what is not a tool.
    public init(parsing text: String, structured: Bool = false) throws(ToolChoiceError) {
        self.structured = structured
        switch text {
        case "all": names = nil
        case "official": names = Self.referenceTools
        default:
            let chosen = Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            let unknown = chosen.filter { Toolbox.named[$0] == nil }.sorted()
            guard unknown.isEmpty, !chosen.isEmpty else { throw ToolChoiceError(unknown: unknown) }
            names = chosen
        }
    }

    func offers(_ name: String) -> Bool { names?.contains(name) ?? true }
}

/// `--tools` named something that is no tool.
public struct ToolChoiceError: Error, Sendable {
    public let unknown: [String]

    public var message: String {
        let known = Toolbox.named.keys.sorted().joined(separator: ", ")
        return unknown.isEmpty ? "--tools: give all, official, or tool names separated by commas (\(known))"
            : "--tools: no tool is named \(unknown.joined(separator: ", ")); the tools are \(known)"
    }
}
