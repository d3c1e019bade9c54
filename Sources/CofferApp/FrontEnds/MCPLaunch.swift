import CofferCore
import CofferMCP
import FileService

/// `coffer mcp [--allow-host DIR]… [--tools all|official|NAME,…] [--structured]`: the Model
/// Context Protocol on standard I/O.
struct MCPLaunch: FrontEndLaunch {
    private var tools = ToolChoice.all

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        do throws(ToolChoiceError) {
            tools = try ToolChoice(parsing: context.options.mcpTools, structured: context.options.mcpStructured)
        } catch {
            return context.stopping(with: error.message, status: 2)
        }
        return AllowedHostFolders.check(context)
    }

    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        var configuration = MCPServer.Configuration(filesRoot: container.userFilesPath, language: context.language,
                                                    version: context.application.version)
        configuration.serverName = context.application.name
        configuration.hostAccess = .only(context.options.allowedHostFolders)
        configuration.tools = tools
        return await MCPServer.serveStandardIO(service, configuration: configuration)
    }
}
