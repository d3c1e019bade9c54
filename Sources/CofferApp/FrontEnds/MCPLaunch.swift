import CofferCore
import CofferMCP
import FileService

/// `coffer mcp [--allow-host DIR]…`: the Model Context Protocol on standard I/O.
struct MCPLaunch: FrontEndLaunch {
    mutating func prepare(_ context: LaunchContext) -> Int32? { AllowedHostFolders.check(context) }

    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        var configuration = MCPServer.Configuration(filesRoot: container.userFilesPath, language: context.language,
                                                    version: context.application.version)
        configuration.serverName = context.application.name
        configuration.hostAccess = .only(context.options.allowedHostFolders)
        return await MCPServer.serveStandardIO(service, configuration: configuration)
    }
}
