import CofferCore
import CofferJSONRPC
import CofferRuntime
import CofferWeb
import FileService
import Foundation

/// `coffer serve [--port N] [--address A] [--open] [--new-token] [--share-only] [--trust-forwarded] [--print-dav-url]`:
/// prints the address with its token (and opens it with `--open`), then serves until SIGTERM or SIGINT.
struct WebLaunch: FrontEndLaunch {
    /// Caught before anything is served.
    private let stops = StopSignals()

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        let (program, address) = (context.application.name, context.options.webAddress)
        // Share links are made for other machines; the browser, which can change everything, is
        // this machine's alone (Sharing.md).
        if context.options.shareOnly { return nil }
        // The browser is served on loopback only, whatever address is asked for (0.0.0.0 or a
        // network's): one message says so and what to do instead (Decisions.md, issue 48).
        guard ServedHost.isLoopback(address) else {
            context.errors.line(LocalizedText(
                "\(program) serve: the file browser, which can change every file, is served on 127.0.0.1 only, not on --address \(address). To use it from another machine, reach it through an SSH tunnel (ssh -L 8080:127.0.0.1:8080 this-machine, with --port 8080 here); to give files to others, serve share links with --share-only --address \(address).",
                "\(program) serve：可以修改所有文件的文件浏览器只在 127.0.0.1 上提供，不能使用 --address \(address)。如需从其他机器使用，请通过 SSH 隧道访问（ssh -L 8080:127.0.0.1:8080 本机，并在此加上 --port 8080）；如需把文件交给他人，请用 --share-only --address \(address) 提供共享链接。")(context.language))
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
        if !ServedHost.isLoopback(options.webAddress) {
            context.errors.line(LocalizedText(
                "\(context.application.name): warning: serving share links on \(options.webAddress): anyone who can reach it and has a link gets what the link shares.",
                "\(context.application.name)：警告：在 \(options.webAddress) 上提供共享链接：任何能访问该地址并持有链接的人都能获得链接所共享的内容。")(options.language))
            context.errors.flush()
        }
        if options.webAddress == "localhost" { configuration.address = "127.0.0.1" }
        configuration.opensBrowser = options.opensBrowser
        configuration.redirectFolder = container.appDataPath
        configuration.davLocksPath = container.davLocksPath
        configuration.davAppleFilesPath = container.davAppleFilesPath
        let language = options.language
        let program = context.application.name
        let shareOnly = options.shareOnly
        // WebDAV's addresses: the page's, at /dav/MOUNT/, with the token as the password.
        let davMounts = options.printsDAVURL && !shareOnly ? service.mounts.filter(\.isVisible).map(\.name) : []
        return await WebServer.serve(service, tokenPath: container.webTokenPath, configuration: configuration,
                                     stops: stops, announce: { url in
            let line = shareOnly
                ? LocalizedText("Coffer is serving share links at \(url)/s/… (“shares” lists them)",
                                "Coffer 正在 \(url)/s/… 提供共享链接（“shares”列出全部链接）")(language)
                : LocalizedText("Coffer is serving your files at \(url)", "Coffer 正在以下地址提供你的文件：\(url)")(language)
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            if !davMounts.isEmpty, let query = url.range(of: "/?token=") {
                let base = url[..<query.lowerBound], token = url[query.upperBound...]
                var lines = davMounts.map { "\(base)/dav/\($0)/" }
                lines.append(LocalizedText("(WebDAV: any user name; the password is \(token))",
                                           "（WebDAV：用户名任意；密码为 \(token)）")(language))
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
        }, open: { page in
            // The browser gets a file only the user can read, never the token (Security.md). It
            // lives on its own, and is reaped when it ends.
            try? ChildProcess.start(["xdg-open", page], grouping: .ownSession, searchingPath: true).reapWhenEnded()
        }, fail: { message in
            FileHandle.standardError.write(Data("\(program) serve: \(message)\n".utf8))
        })
    }
}
