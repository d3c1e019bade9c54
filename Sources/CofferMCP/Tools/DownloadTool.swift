import CofferCore
import CofferTransfers
import FileService

struct DownloadTool: MCPTool {
    static let name = "download_file"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        var engine = DownloadEngine()
        engine.maxSize = try arguments.optionalInteger("maxSize", minimum: 1)
        var folder: (path: VirtualPath, style: PathResolver.Style)?
        if let text = try arguments.optionalString("destination") { folder = try await context.resolve(text) }
        let style = folder?.style ?? .host
        let node = try await context.perform(DownloadFile(try arguments.string("url"), into: folder?.path ?? DownloadFile.defaultFolder,
                                                          as: try arguments.optionalString("name"), engine: engine))
        let shown = context.paths.display(node.path, style)
        return ToolOutput(text: "Downloaded to \(shown)", fields: ["file": nodeJSON(node, style, context.paths)])
    }
}
