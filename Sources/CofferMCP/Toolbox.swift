/// Every tool `coffer mcp` offers: the reference filesystem server's, by the same names with
/// the same arguments, then Coffer's own.
enum Toolbox {
    static let all: [any MCPTool.Type] = [
        // The reference server's.
        ReadTextFile.self, ReadFile.self, ReadMediaFile.self, ReadMultipleFiles.self, WriteFileTool.self, EditFile.self,
        CreateDirectory.self, ListDirectory.self, ListDirectoryWithSizes.self, DirectoryTree.self, MoveFile.self,
        SearchFiles.self, GetFileInfo.self, ListAllowedDirectories.self,
        // Coffer's.
        CopyFile.self, TrashFile.self, ListTrashTool.self, RestoreFile.self, FindFiles.self, SearchFileContents.self,
        ImportFiles.self, ExportFile.self,
    ]

    static let named: [String: any MCPTool.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
