import CofferCore
import FileService
import CofferMount

/// What `coffer` was asked to do, from its arguments and environment.
struct LaunchOptions {
    enum Action: Equatable {
        case interactive
        case commands([String])
        case help([String])
        case showHelp
        case showVersion
        case rpc
        /// `mcp`: the Model Context Protocol on standard input and output.
        case mcp
        /// `serve`: the file browser in a browser, over HTTP and a WebSocket.
        case serve
        /// `open-files PATH…`: files handed in by a file manager.
        case openFiles([String])
        /// `mount DIR`: the file space as a file system (FUSE), until unmounted.
        case mount
        /// `install-desktop [--user]`, `uninstall-desktop`.
        case installDesktop
        case uninstallDesktop
        /// An application's own front end (``CofferFrontEnd``): its command and its arguments.
        case custom(String, [String])
    }


    /// `coffer rpc --framing lsp|ndjson`; detected from the first byte when nil.
    var framing: String?
    /// `coffer rpc|mcp --allow-host DIR`, repeatable: the host folders programs may use.
    var allowedHostFolders: [String] = []
    /// `coffer mcp --tools all|official|NAME,…` and `--structured`: the tools offered, and
    /// whether their listings carry output schemas.
    var mcpTools = "all"
    var mcpStructured = false
    /// `coffer mcp --listen http://HOST:PORT/PATH`: Streamable HTTP instead of standard I/O
    /// (with `--address A` beyond loopback, `--new-token` to replace the token).
    var mcpListen: String?
    var mcpAddress: String?
    /// `coffer rpc --listen unix:PATH`: the socket to serve clients on, instead of stdio.
    var socketPath: String?
    /// `coffer rpc --connect unix:PATH`: relay standard I/O to a server listening there.
    var connectPath: String?
    /// `--no-recents`: record nothing in the desktop's recent-files list.
    var recordsRecents = true
    /// `--thumbnail-max-age DAYS`, `--thumbnail-max-size MB` (-1: no limit), as GNOME's settings.
    var cacheLimits = CacheLimits.standard
    /// `--no-versions`, `--versions-max-size SIZE`.
    var versions = VersionSettings.standard
    /// `--mount NAME=s3://BUCKET[/PREFIX]`, repeatable: buckets mounted beside `files:`.
    var s3Mounts: [(name: String, location: String)] = []
    /// `--s3-endpoint URL`: the S3 server, over `AWS_ENDPOINT_URL` and the profile's.
    var s3Endpoint: String?
    /// `coffer serve --port N` (0: the system chooses), `--address A`, `--open`, `--new-token`.
    var webPort = 8790
    var webAddress = "127.0.0.1"
    var opensBrowser = false
    var newToken = false
    /// `serve --share-only`: share links only, which alone may be served beyond this machine.
    var shareOnly = false
    /// `serve --trust-forwarded`: the client's address from a reverse proxy's `X-Forwarded-For`.
    var trustsForwardedFor = false
    /// `serve --print-dav-url`: also print WebDAV's address for each mount, to paste into a file manager.
    var printsDAVURL = false
    /// `serve --tls-cert FILE --tls-key FILE`: HTTPS, which WebDAV beyond loopback needs.
    var tlsCertificate: String?
    var tlsKey: String?
    /// `coffer mount DIR [--mount NAME | --all] [--cache-timeout SECONDS] [--timeout SECONDS] [--scratch PATTERN]…`.
    var mountDirectory: String?
    var mountOptions = MountOptions()
    /// The environment the options were read in (S3 mounts take their keys from it).
    var environment: [String: String]

    var action: Action = .interactive
    /// `-h` or `--help` after an application's command (before any `--`): that front end's usage.
    var frontEndHelp = false
    var containerPath: String
    /// Whether `--container` was given (an installed desktop entry passes it on).
    var containerGiven = false
    var language: Language
    /// The application's document types; the package's own `DocumentTypes.json` when nil.
    var documentTypesPath: String?

    init(arguments: [String], environment: [String: String], application: String = "coffer",
         commands: Set<String> = []) throws(CofferError) {
        self.environment = environment
        language = Language.preferred(environment: environment)
        containerPath = Container.defaultLocation(environment: environment, application: application)
        var reader = ArgumentReader(arguments)
        while !reader.isAtEnd {
            if case .custom(let command, let given) = action, reader.current == "--" {
                // After `--`, every argument is the front end's, however it looks.
                action = .custom(command, given + reader.rest())
            } else if case .custom = action, reader.current == "-h" || reader.current == "--help" {
                frontEndHelp = true
            } else if case .custom(let command, let given) = action {
                // The options that shape the service are read wherever they stand; everything else
                // after an application's command is that front end's own.
                if try !readServiceOption(&reader) { action = .custom(command, given + [reader.current]) }
            } else if action == .interactive, commands.contains(reader.current) {
                action = .custom(reader.current, [])
            } else if try !readCommon(&reader), try !readFrontEndOption(&reader) {
                throw CofferError(.invalidArgument, detail: "unexpected argument “\(reader.current)”")
            }
            reader.advance()
        }
        if containerPath.isEmpty { throw CofferError(.invalidArgument, detail: "--container needs a folder") }
    }

    /// A number of seconds, at least `least`.
    private static func seconds(_ text: String, of option: String, least: Double) throws(CofferError) -> Double {
        guard let number = Double(text), number.isFinite, number >= least, number <= 86_400 else {
            throw CofferError(.invalidArgument, detail: "\(option) \(text): use a number of seconds from \(Int(least)) to 86400")
        }
        return number
    }

    /// A whole number of `unit`, or -1 for no limit.
    private static func limit(_ text: String, of option: String, unit: String) throws(CofferError) -> Int {
        guard let number = Int(text), number >= -1 else {
            throw CofferError(.invalidArgument, detail: "\(option) \(text): use a number of \(unit), or -1 for no limit")
        }
        return number
    }

    /// An option every front end takes, or the word that chooses the front end; `false` when
    /// the argument is neither.
    private mutating func readCommon(_ reader: inout ArgumentReader) throws(CofferError) -> Bool {
        let argument = reader.current
        if argument == "-c" {
            // Each -c runs after the one before it, as if on lines of their own (a second -c
            // used to replace the first without a word).
            let script = try reader.separateValue(of: "-c")
            if case .commands(let earlier) = action { action = .commands(earlier + [script]) } else { action = .commands([script]) }
        } else if try readServiceOption(&reader) {
            return true
        } else {
            switch argument {
            case "-h", "--help": action = .showHelp
            case "-V", "--version": action = .showVersion
            case "help": action = .help(reader.rest())
            case "rpc": action = .rpc
            case "mcp": action = .mcp
            case "serve": action = .serve
            case "mount": action = .mount
            case "install-desktop": action = .installDesktop
            case "uninstall-desktop": action = .uninstallDesktop
            case "open-files":
                let paths = reader.rest().drop { $0 == "--" }
                guard !paths.isEmpty else { throw CofferError(.invalidArgument, detail: "open-files needs the files to open") }
                action = .openFiles(Array(paths))
            default: return false
            }
        }
        return true
    }

    /// One of the options that shape the service (`--container`, `--lang`, `--mount`, …), read
    /// wherever it stands, also after an application's own command; `false` for anything else.
    private mutating func readServiceOption(_ reader: inout ArgumentReader) throws(CofferError) -> Bool {
        let argument = reader.current
        if let path = try reader.value(of: "--container") {
            containerPath = path
            containerGiven = true
        } else if let value = try reader.value(of: "--mount") {
            // `coffer mount DIR --mount NAME`: the mount shown (an S3 one is still NAME=s3://…).
            if action == .mount, !value.contains("=") {
                mountOptions.mount = value
                return true
            }
            guard let equals = value.firstIndex(of: "="), value[value.index(after: equals)...].hasPrefix("s3://") else {
                throw CofferError(.invalidArgument, detail: "--mount \(value): use NAME=s3://BUCKET[/PREFIX]")
            }
            s3Mounts.append((String(value[..<equals]), String(value[value.index(after: equals)...])))
        } else if argument == "--no-recents" {
            recordsRecents = false
        } else if argument == "--no-versions" {
            versions.keepsVersions = false
        } else if let value = try reader.value(of: "--versions-max-size") {
            versions.sizeLimit = try SearchFilters.parseSize(value)
        } else if let value = try reader.value(of: "--thumbnail-max-age") {
            cacheLimits.thumbnailMaxAge = CacheLimits.age(days: try Self.limit(value, of: "--thumbnail-max-age", unit: "days"))
        } else if let value = try reader.value(of: "--thumbnail-max-size") {
            cacheLimits.thumbnailMaxBytes = CacheLimits.bytes(
                megabytes: try Self.limit(value, of: "--thumbnail-max-size", unit: "megabytes"))
        } else if let value = try reader.value(of: "--s3-endpoint") {
            s3Endpoint = value
        } else if let value = try reader.value(of: "--document-types") {
            documentTypesPath = value
        } else if let code = try reader.value(of: "--lang") {
            guard let chosen = Language(code: code) else {
                throw CofferError(.invalidArgument, detail: "--lang \(code): use en or zh-Hans")
            }
            language = chosen
        } else {
            return false
        }
        return true
    }

    /// An option of the front end already chosen (`serve --port 8080`); `false` otherwise.
    private mutating func readFrontEndOption(_ reader: inout ArgumentReader) throws(CofferError) -> Bool {
        switch action {
        case .serve:
            if let text = try reader.value(of: "--port") {
                guard let port = Int(text), (0...65535).contains(port) else {
                    throw CofferError(.invalidArgument, detail: "--port \(text): use a number from 0 to 65535")
                }
                webPort = port
            } else if let address = try reader.value(of: "--address") {
                webAddress = address
            } else if reader.current == "--open" {
                opensBrowser = true
            } else if reader.current == "--new-token" {
                newToken = true
            } else if reader.current == "--share-only" {
                shareOnly = true
            } else if reader.current == "--trust-forwarded" {
                trustsForwardedFor = true
            } else if reader.current == "--print-dav-url" {
                printsDAVURL = true
            } else if let file = try reader.value(of: "--tls-cert") {
                tlsCertificate = file
            } else if let file = try reader.value(of: "--tls-key") {
                tlsKey = file
            } else {
                return false
            }
        case .mount:
            if reader.current == "--all" {
                mountOptions.allMounts = true
            } else if let value = try reader.value(of: "--cache-timeout") {
                mountOptions.attributeTimeout = try Self.seconds(value, of: "--cache-timeout", least: 0)
            } else if let value = try reader.value(of: "--scratch") {
                mountOptions.scratchNames.append(value)
            } else if let value = try reader.value(of: "--timeout") {
                mountOptions.operationTimeout = try Self.seconds(value, of: "--timeout", least: 1)
            } else if mountDirectory == nil, !reader.current.hasPrefix("-") {
                mountDirectory = reader.current
            } else {
                return false
            }
        case .installDesktop:
            return reader.current == "--user"  // the only kind of installation there is: into $XDG_DATA_HOME
        case .rpc, .mcp:
            if let folder = try reader.value(of: "--allow-host") {
                allowedHostFolders.append(folder)
            } else if action == .mcp, let value = try reader.value(of: "--tools") {
                mcpTools = value
            } else if action == .mcp, reader.current == "--structured" {
                mcpStructured = true
            } else if action == .mcp, let value = try reader.value(of: "--listen") {
                mcpListen = value
            } else if action == .mcp, let value = try reader.value(of: "--address") {
                mcpAddress = value
            } else if action == .mcp, reader.current == "--new-token" {
                newToken = true
            } else if action == .rpc, let value = try reader.value(of: "--framing") {
                guard value == "lsp" || value == "ndjson" else {
                    throw CofferError(.invalidArgument, detail: "--framing \(value): use lsp or ndjson")
                }
                framing = value
            } else if action == .rpc, let value = try reader.value(of: "--listen") {
                guard value.hasPrefix("unix:"), value.count > "unix:".count else {
                    throw CofferError(.invalidArgument, detail: "--listen \(value): use unix:PATH")
                }
                socketPath = String(value.dropFirst("unix:".count))
            } else if action == .rpc, let value = try reader.value(of: "--connect") {
                guard value.hasPrefix("unix:"), value.count > "unix:".count else {
                    throw CofferError(.invalidArgument, detail: "--connect \(value): use unix:PATH")
                }
                connectPath = String(value.dropFirst("unix:".count))
            } else {
                return false
            }
        default:
            return false
        }
        return true
    }

    /// The usage text, naming the program (`coffer`, or an application built the same way).
    static func usage(_ language: Language, program: String = "coffer") -> String {
        switch language {
        case .english:
            return """
                Usage: \(program) [--container DIR] [--lang en|zh-Hans] [--document-types JSON] [--mount NAME=s3://BUCKET[/PREFIX]]…
                           [--s3-endpoint URL] [--no-recents] [--thumbnail-max-age DAYS] [--thumbnail-max-size MB]
                           [--no-versions | --versions-max-size SIZE] [-c 'COMMAND; COMMAND']…
                       \(program) [--container DIR] rpc [--framing lsp|ndjson] [--allow-host DIR]… [--listen unix:PATH]
                       \(program) rpc --connect unix:PATH
                       \(program) [--container DIR] mcp [--allow-host DIR]… [--tools all|official|NAME,…] [--structured]
                           [--listen http://127.0.0.1:PORT/mcp [--address A] [--new-token]]
                       \(program) [--container DIR] serve [--port N] [--address A] [--open] [--new-token] [--share-only] [--trust-forwarded]
                           [--print-dav-url] [--tls-cert FILE --tls-key FILE]
                       \(program) [--container DIR] mount DIR [--mount NAME | --all] [--cache-timeout SECONDS] [--timeout SECONDS]
                           [--scratch PATTERN]…
                       \(program) [--container DIR] open-files PATH…
                       \(program) install-desktop [--user] | uninstall-desktop
                       \(program) help [COMMAND]
                       \(program) --version

                Without -c, commands are read from standard input: interactively on a terminal,
                one per line when piped. Several -c run one after the other. The default container is $XDG_DATA_HOME/\(program)
                (~/.local/share/\(program)). --document-types names the application's manifest of
                document types (default: the one built in). Files opened, edited, imported, exported and
                downloaded are recorded in the desktop's recent files unless --no-recents. Thumbnails are
                kept 180 days and 512 MB at most (-1: no limit). What a save or a replace writes over is
                kept as a version, within a tenth of the disk unless --versions-max-size (500M, 2G);
                --no-versions sends it to the trash instead. Run “\(program) help” for the list of commands.
                “\(program) rpc” serves JSON-RPC 2.0 on standard input and output instead, or with
                --listen on a Unix-domain socket to many clients at once; programs may use only the
                host folders named with --allow-host; --connect joins standard I/O to such a server. “\(program) mcp” serves the Model Context Protocol
                on standard input and output, for AI editors and agents. “\(program) serve” is the file
                browser in a web browser, on 127.0.0.1 with an access token in the address it prints.
                “\(program) mount DIR” shows files: as a folder of this machine for every program, until
                Ctrl-C (deleting there moves to the trash; replacing keeps a version).
                “\(program) install-desktop” adds \(program) to the
                desktop's “Open With” for the types it opens; “open-files” is what the desktop runs then.
                """
        case .simplifiedChinese:
            return """
                用法：\(program) [--container 目录] [--lang en|zh-Hans] [--document-types JSON] [--mount 名称=s3://存储桶[/前缀]]…
                          [--s3-endpoint 网址] [--no-recents] [--thumbnail-max-age 天数] [--thumbnail-max-size MB]
                          [--no-versions | --versions-max-size 大小] [-c '命令; 命令']…
                      \(program) [--container 目录] rpc [--framing lsp|ndjson] [--allow-host 目录]… [--listen unix:路径]
                      \(program) rpc --connect unix:路径
                      \(program) [--container 目录] mcp [--allow-host 目录]… [--tools all|official|名称,…] [--structured]
                           [--listen http://127.0.0.1:端口/mcp [--address 地址] [--new-token]]
                      \(program) [--container 目录] serve [--port 端口] [--address 地址] [--open] [--new-token] [--share-only] [--trust-forwarded]
                           [--print-dav-url] [--tls-cert 文件 --tls-key 文件]
                      \(program) [--container 目录] mount 目录 [--mount 名称 | --all] [--cache-timeout 秒数] [--timeout 秒数]
                           [--scratch 模式]…
                      \(program) [--container 目录] open-files 路径…
                      \(program) install-desktop [--user] | uninstall-desktop
                      \(program) help [命令]
                      \(program) --version

                不带 -c 时从标准输入读取命令：在终端中交互运行，通过管道输入时每行一条命令。多个 -c 依次运行。
                默认容器为 $XDG_DATA_HOME/\(program)（~/.local/share/\(program)）。--document-types 指定应用的
                文稿类型清单（默认使用内置清单）。打开、编辑、导入、导出和下载的文件会记入桌面的最近文件，
                除非使用 --no-recents。缩略图最多保留 180 天、512 MB（-1：不限）。保存或替换所覆盖的内容会保留为
                历史版本，总量不超过磁盘的十分之一，除非使用 --versions-max-size（500M、2G）；--no-versions 则改为
                移到废纸篓。运行“\(program) help”查看命令列表。
                “\(program) rpc”改为在标准输入输出上提供 JSON-RPC 2.0 服务，或用 --listen 在 Unix
                域套接字上同时为多个客户端服务；程序只能使用 --allow-host 指定的本机文件夹；--connect 把
                标准输入输出接到这样的服务上。
                “\(program) mcp”在标准输入输出上提供模型上下文协议（MCP）服务，供 AI 编辑器和智能体使用。
                “\(program) serve”在网页浏览器中提供文件浏览器，监听 127.0.0.1，打印的地址中带有访问令牌。
                “\(program) mount 目录”把 files: 作为本机的一个文件夹提供给所有程序，直到按 Ctrl-C
                （在其中删除的会移到废纸篓；被替换的会保留为版本）。
                “\(program) install-desktop”把 \(program) 加入桌面“打开方式”中它能打开的类型；桌面随后运行
                “open-files”。
                """
        }
    }
}

extension LaunchOptions.Action {
    /// Whether programs talk to it (`rpc`, `mcp`): they get only the host folders allowed.
    var servesPrograms: Bool { self == .rpc || self == .mcp }
}

/// The words of a command line, read one at a time.
struct ArgumentReader {
    private let arguments: [String]
    private var index = 0

    init(_ arguments: [String]) { self.arguments = arguments }

    var isAtEnd: Bool { index >= arguments.count }
    var current: String { arguments[index] }

    mutating func advance() { index += 1 }

    /// `NAME VALUE` or `NAME=VALUE`: the value when the current argument is the option `name`,
    /// else `nil`.
    mutating func value(of name: String) throws(CofferError) -> String? {
        if current == name { return try separateValue(of: name) }
        if current.hasPrefix(name + "=") { return String(current.dropFirst(name.count + 1)) }
        return nil
    }

    /// The argument after the current one, which is the option `name`.
    mutating func separateValue(of name: String) throws(CofferError) -> String {
        index += 1
        guard index < arguments.count else { throw CofferError(.invalidArgument, detail: "\(name) needs a value") }
        return arguments[index]
    }

    /// Every argument after the current one; nothing is read after them.
    mutating func rest() -> [String] {
        let rest = Array(arguments[(index + 1)...])
        index = arguments.count - 1
        return rest
    }
}
