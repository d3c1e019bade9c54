import CofferCore
import CofferHTTPServer
import CofferJSONRPC
import CofferRuntime
import CofferWeb
import FileService
import Foundation

/// `coffer serve [--port N] [--address A] [--open] [--new-token] [--share-only] [--trust-forwarded] [--print-dav-url]
/// [--tls-cert FILE --tls-key FILE]`: prints the address with its token (and opens it with `--open`), then serves
/// until SIGTERM or SIGINT. Over TLS, an address other than loopback serves WebDAV (and share links) only.
struct WebLaunch: FrontEndLaunch {
    /// Caught before anything is served.
    private let stops = StopSignals()

    mutating func prepare(_ context: LaunchContext) -> Int32? {
        let (program, address) = (context.application.name, context.options.webAddress)
        if (context.options.tlsCertificate == nil) != (context.options.tlsKey == nil) {
            context.errors.line(LocalizedText("\(program) serve: TLS takes both --tls-cert FILE and --tls-key FILE.",
                                              "\(program) serve：TLS 需要同时给出 --tls-cert 文件 和 --tls-key 文件。")(context.language))
            context.errors.flush()
            return 2
        }
        // Share links are made for other machines; the browser, which can change everything, is
        // this machine's alone (Sharing.md). WebDAV reaches other machines over TLS only.
        if context.options.shareOnly || context.options.tlsCertificate != nil { return nil }
        // The browser is served on loopback only, whatever address is asked for (0.0.0.0 or a
        // network's): one message says so and what to do instead (Decisions.md, issue 48).
        guard ServedHost.isLoopback(address) else {
            context.errors.line(LocalizedText(
                "\(program) serve: the file browser, which can change every file, is served on 127.0.0.1 only, not on --address \(address). To use it from another machine, reach it through an SSH tunnel (ssh -L 8080:127.0.0.1:8080 this-machine, with --port 8080 here); to reach WebDAV from other machines, serve it over TLS with --tls-cert FILE --tls-key FILE; to give files to others, serve share links with --share-only --address \(address).",
                "\(program) serve：可以修改所有文件的文件浏览器只在 127.0.0.1 上提供，不能使用 --address \(address)。如需从其他机器使用，请通过 SSH 隧道访问（ssh -L 8080:127.0.0.1:8080 本机，并在此加上 --port 8080）；如需从其他机器使用 WebDAV，请用 --tls-cert 文件 --tls-key 文件 通过 TLS 提供；如需把文件交给他人，请用 --share-only --address \(address) 提供共享链接。")(context.language))
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
        if let certificate = options.tlsCertificate, let key = options.tlsKey {
            configuration.tls = TLSFiles(certificate: certificate, key: key)
        }
        let remote = !ServedHost.isLoopback(options.webAddress) && !options.shareOnly
        if remote {
            context.errors.line(LocalizedText(
                "\(context.application.name): serving WebDAV over TLS on \(options.webAddress): anyone who can reach it and has the password (the token) can change every file. The file browser is not served there.",
                "\(context.application.name)：在 \(options.webAddress) 上通过 TLS 提供 WebDAV：任何能访问该地址并知道密码（令牌）的人都能修改所有文件。文件浏览器不在该地址提供。")(options.language))
            context.errors.flush()
        } else if !ServedHost.isLoopback(options.webAddress) {
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
        let davMounts = (options.printsDAVURL || remote) && !shareOnly ? service.mounts.filter(\.isVisible).map(\.name) : []
        let tokenPath = container.webTokenPath
        return await WebServer.serve(service, tokenPath: container.webTokenPath, configuration: configuration,
                                     stops: stops, announce: { url in
            let line = shareOnly
                ? LocalizedText("Coffer is serving share links at \(url)/s/… (“shares” lists them)",
                                "Coffer 正在 \(url)/s/… 提供共享链接（“shares”列出全部链接）")(language)
                : remote ? LocalizedText("Coffer is serving your files over WebDAV at \(url)/dav/",
                                         "Coffer 正在通过 WebDAV 提供你的文件：\(url)/dav/")(language)
                : LocalizedText("Coffer is serving your files at \(url)", "Coffer 正在以下地址提供你的文件：\(url)")(language)
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            // (Beyond loopback the address carries no token: the page is not served there.)
            let parts = url.range(of: "/?token=").map { (url[..<$0.lowerBound], url[$0.upperBound...]) }
                ?? (remote ? (try? AccessToken(path: tokenPath).current(renew: false)).map { (url[...], Substring($0)) } : nil)
            if !davMounts.isEmpty, let (base, token) = parts {
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
