import CofferCore
import CofferJSONRPC
import CofferRuntime
import CofferWeb
import FileService
import Foundation

/// `coffer serve [--port N] [--address A] [--open] [--new-token] [--share-only] [--trust-forwarded]`:
/// prints the address with its token (and opens it with `--open`), then serves until SIGTERM or SIGINT.
struct WebLaunch: FrontEndLaunch {
    /// Caught before anything is served.
    private let stops = StopSignals()

    static let loopback: Set<String> = ["127.0.0.1", "localhost", "::1"]

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        let (program, address) = (context.application.name, context.options.webAddress)
        // Share links are made for other machines; the browser, which can change everything, is
        // this machine's alone (Sharing.md).
        if context.options.shareOnly { return nil }
        // Every address at once cannot work: the page answers only to the host it is addressed
        // by (DNS rebinding), so one address must be named (Decisions.md).
        guard !["0.0.0.0", "::", "[::]"].contains(address) else {
            context.errors.line(LocalizedText(
                "\(program) serve: --address \(address) means every address, but the page answers only to the one it is opened at; name this machine's address on the network you serve (for example --address 192.168.1.20), or leave --address out for 127.0.0.1.",
                "\(program) serve：--address \(address) 表示所有地址，但页面只响应打开它时所用的那个地址；请指定本机在所服务网络上的地址（例如 --address 192.168.1.20），或省略 --address 以使用 127.0.0.1。")(context.language))
            context.errors.flush()
            return 2
        }
        guard Self.loopback.contains(address) else {
            context.errors.line(LocalizedText(
                "\(program) serve: --address \(address) would open the file browser, which can change every file, to other machines; only share links may be served there: add --share-only (the browser stays on 127.0.0.1 in another coffer serve).",
                "\(program) serve：--address \(address) 会把可以修改所有文件的文件浏览器开放给其他机器；只有共享链接可以在那里提供：请加上 --share-only（文件浏览器可由另一个 coffer serve 在 127.0.0.1 上提供）。")(context.language))
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
        configuration.shareOnly = options.shareOnly
        configuration.trustsForwardedFor = options.trustsForwardedFor
        if !Self.loopback.contains(options.webAddress) {
            context.errors.line(LocalizedText(
                "\(context.application.name): warning: serving share links on \(options.webAddress): anyone who can reach it and has a link gets what the link shares.",
                "\(context.application.name)：警告：在 \(options.webAddress) 上提供共享链接：任何能访问该地址并持有链接的人都能获得链接所共享的内容。")(options.language))
            context.errors.flush()
        }
        if options.webAddress == "localhost" { configuration.address = "127.0.0.1" }
        configuration.opensBrowser = options.opensBrowser
        configuration.redirectFolder = container.appDataPath
        let language = options.language
        let program = context.application.name
        let shareOnly = options.shareOnly
        return await WebServer.serve(service, tokenPath: container.appDataPath + "/web-token", configuration: configuration,
                                     stops: stops, announce: { url in
            let line = shareOnly
                ? LocalizedText("Coffer is serving share links at \(url)/s/… (“shares” lists them)",
                                "Coffer 正在 \(url)/s/… 提供共享链接（“shares”列出全部链接）")(language)
                : LocalizedText("Coffer is serving your files at \(url)", "Coffer 正在以下地址提供你的文件：\(url)")(language)
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }, open: { page in
            // The browser gets a file only the user can read, never the token (Security.md). It
            // lives on its own, and is reaped when it ends.
            try? ChildProcess.start(["xdg-open", page], grouping: .ownSession, searchingPath: true).reapWhenEnded()
        }, fail: { message in
            FileHandle.standardError.write(Data("\(program) serve: \(message)\n".utf8))
        })
    }
}
