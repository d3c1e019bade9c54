import CofferCore
import CofferJSONRPC
import CofferWeb
import FileService
import Foundation

/// `coffer serve [--port N] [--address A] [--open] [--new-token]`: prints the address with its
/// token (and opens it with `--open`), then serves until SIGTERM or SIGINT.
struct WebLaunch: FrontEndLaunch {
    /// Caught before anything is served.
    private let stops = StopSignals()

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        // Every address at once cannot work: the page answers only to the host it is addressed
        // by (DNS rebinding), so one address must be named (Decisions.md).
        let (program, address) = (context.application.name, context.options.webAddress)
        guard !["0.0.0.0", "::", "[::]"].contains(address) else {
            context.errors.line(LocalizedText(
                "\(program) serve: --address \(address) means every address, but the page answers only to the one it is opened at; name this machine's address on the network you serve (for example --address 192.168.1.20), or leave --address out for 127.0.0.1.",
                "\(program) serve：--address \(address) 表示所有地址，但页面只响应打开它时所用的那个地址；请指定本机在所服务网络上的地址（例如 --address 192.168.1.20），或省略 --address 以使用 127.0.0.1。")(context.language))
            context.errors.flush()
            return 2
        }
        return nil
    }

    @MainActor
    func run(_ context: LaunchContext, service: FileService, container: Container) async -> Int32 {
        let options = context.options
        var configuration = WebServer.Configuration(language: options.language, version: context.application.version)
        configuration.address = options.webAddress
        configuration.port = options.webPort
        configuration.newToken = options.newToken
        if !["127.0.0.1", "localhost", "::1"].contains(options.webAddress) {
            context.errors.line(LocalizedText(
                "\(context.application.name): warning: serving on \(options.webAddress): anyone who can reach it and has the address with its token can change your files.",
                "\(context.application.name)：警告：在 \(options.webAddress) 上提供服务：任何能访问该地址并持有带令牌的网址的人都能修改你的文件。")(options.language))
            context.errors.flush()
        }
        if options.webAddress == "localhost" { configuration.address = "127.0.0.1" }
        configuration.opensBrowser = options.opensBrowser
        configuration.redirectFolder = container.appDataPath
        let language = options.language
        let program = context.application.name
        return await WebServer.serve(service, tokenPath: container.appDataPath + "/web-token", configuration: configuration,
                                     stops: stops, announce: { url in
            let line = LocalizedText("Coffer is serving your files at \(url)", "Coffer 正在以下地址提供你的文件：\(url)")(language)
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }, open: { page in
            // The browser gets a file only the user can read, never the token (Security.md).
            _ = try? Process.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["xdg-open", page])
        }, fail: { message in
            FileHandle.standardError.write(Data("\(program) serve: \(message)\n".utf8))
        })
    }
}
