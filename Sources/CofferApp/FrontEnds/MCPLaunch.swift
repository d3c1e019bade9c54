import CofferCore
import CofferJSONRPC
import CofferMCP
import FileService
import Foundation

/// `coffer mcp [--allow-host DIR]… [--tools all|official|NAME,…] [--structured]`: the Model
/// Context Protocol on standard I/O.
struct MCPLaunch: FrontEndLaunch {
    private var tools = ToolChoice.all
    /// With `--listen`: where to serve Streamable HTTP (its token path is filled in at `run`).
    private var http: MCPServer.HTTPOptions?
    /// SIGTERM and SIGINT, caught before anything is served over HTTP (on standard I/O the
    /// end of input ends the server, and a signal kills it as before).
    private var stops: StopSignals?

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        do throws(ToolChoiceError) {
            tools = try ToolChoice(parsing: context.options.mcpTools, structured: context.options.mcpStructured)
        } catch {
            return context.stopping(with: error.message, status: 2)
        }
        if let listen = context.options.mcpListen {
            guard var options = MCPServer.HTTPOptions(url: listen, tokenPath: "") else {
                return context.stopping(with: "--listen \(listen): give http://127.0.0.1:PORT/PATH", status: 2)
            }
            // Every tool can change every file: loopback only, unless the user names the address.
            if let address = context.options.mcpAddress {
                options.address = address
            } else if !options.isLoopback {
                return context.stopping(with: LocalizedText(
                    "--listen \(listen) is not this machine's loopback; MCP serves every file to whoever has the token, so an address beyond loopback must be named with --address too",
                    "--listen \(listen) 不是本机回环地址；MCP 会把所有文件提供给持有令牌的任何人，因此回环以外的地址必须同时用 --address 指明")(context.language), status: 2)
            }
            options.newToken = context.options.newToken
            http = options
            stops = StopSignals()
        } else if context.options.mcpAddress != nil {
            return context.stopping(with: "--address goes with --listen", status: 2)
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
        guard var http, let stops else { return await MCPServer.serveStandardIO(service, configuration: configuration) }
        http.tokenPath = container.mcpTokenPath
        let (language, program, tokenPath) = (context.language, context.application.name, http.tokenPath)
        return await MCPServer.serveHTTP(service, configuration: configuration, http: http, stops: stops, announce: { address, token in
            var lines = LocalizedText("Coffer's MCP server is listening at \(address)", "Coffer 的 MCP 服务器正在监听 \(address)")(language)
            lines += "\n" + (token.map { LocalizedText(
                "Its token (send Authorization: Bearer TOKEN), shown this once and kept in \(tokenPath): \($0)",
                "令牌（请发送 Authorization: Bearer 令牌），仅显示这一次，保存在 \(tokenPath)：\($0)")(language) }
                ?? LocalizedText("Its token is in \(tokenPath).", "令牌保存在 \(tokenPath)。")(language))
            FileHandle.standardOutput.write(Data((lines + "\n").utf8))
        }, fail: { message in
            FileHandle.standardError.write(Data("\(program) mcp: \(message)\n".utf8))
        })
    }
}
