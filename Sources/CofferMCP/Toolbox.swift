/// Every tool `coffer mcp` answers, by name: the reference filesystem server's, with the
/// same arguments, then Coffer's own. Their listings are ``ToolCatalog``'s, in its order.
enum Toolbox {
    static let all: [any MCPTool.Type] = [
        // The reference server's (`read_file` is `read_text_file` under its old name).
        ReadTextFile.self, ReadMediaFile.self, ReadMultipleFiles.self, WriteFileTool.self, EditFile.self,
        CreateDirectory.self, ListDirectory.self, ListDirectoryWithSizes.self, DirectoryTree.self, MoveFile.self,
        SearchFiles.self, GetFileInfo.self, ListAllowedDirectories.self,
        // Coffer's.
        CopyFile.self, TrashFile.self, TagFiles.self, ListTrashTool.self, RestoreFile.self, ListVersionsTool.self, RestoreVersionTool.self, UndoChangesTool.self, FindFiles.self, SearchFileContents.self,
        ImportFiles.self, ExportFile.self, DownloadTool.self,
    ]

    private static let byName: [String: any MCPTool.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The tool a name calls, aliases included.
    static let named: [String: any MCPTool.Type] = Dictionary(uniqueKeysWithValues: ToolCatalog.entries.compactMap { entry in
        byName[entry.tool].map { (entry.name, $0) }
    })

    /// What `tools/list` shows of the tools `choice` offers.
    static func listings(_ choice: ToolChoice) -> [JSONValue] {
        ToolCatalog.entries.filter { named[$0.name] != nil && choice.offers($0.name) }.map { $0.listing(structured: choice.structured) }
    }
}
