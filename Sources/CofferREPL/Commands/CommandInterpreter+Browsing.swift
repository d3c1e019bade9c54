import CofferCore
import CofferRuntime
import FileService

extension CommandInterpreter {
    func list(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "ls")
        let long = arguments.flags.contains("l")
        var order = SortOrder.byName
        if arguments.flags.contains("t") { order = SortOrder(.modificationDate) }
        if arguments.flags.contains("S") { order = SortOrder(.size) }
        if arguments.flags.contains("r") { order.ascending.toggle() }
        // `ls` shows no backup exclusion (`info` does): it is not read.
        let options = ListOptions(includeHidden: arguments.flags.contains("a"), order: order, readsBackupExclusion: false)
        let targets = arguments.operands.isEmpty ? ["."] : arguments.operands
        // As `ls` does: the files named come first, together; then each folder, under its name
        // when there are several (`ls *.txt Photos`).
        var files: [FileNode] = [], folders: [(VirtualPath, FileNode)] = []
        for target in targets {
            let path = try resolve(target)
            let node = try await perform(StatItem(path))
            if node.kind == .file { files.append(node) } else { folders.append((path, node)) }
        }
        if !files.isEmpty { long ? printLong(files) : files.forEach { output.line(styled($0)) } }
        for (index, (path, _)) in folders.enumerated() {
            if targets.count > 1 {
                if index > 0 || !files.isEmpty { output.line() }
                output.line("\(shown(path.description)):")
            }
            let page = try await perform(ListFolder(path, options: options))
            if arguments.flags.contains("thumbnails") { prefetchThumbnails(of: page.items) }
            if long {
                printLong(page.items)
            } else {
                for item in page.items { output.line(styled(item)) }
            }
        }
    }

    /// `name  size  date  type`, name first, columns aligned.
    private func printLong(_ nodes: [FileNode]) {
        let widths = nodes.map { Formatting.width($0.name) }
        let nameWidth = min(48, widths.max() ?? 0)
        let sizes = nodes.map { $0.contentSize.map(Formatting.size) ?? "-" }
        let sizeWidth = sizes.reduce(1) { max($0, $1.count) }
        var dates = Formatting.MinuteCache()
        for index in nodes.indices {
            let node = nodes[index]
            // Written piece by piece: a line of 20,000 is not worth a string of its own.
            output.write(styled(node))
            output.write(spaces: max(0, nameWidth - widths[index]) + 2 + max(0, sizeWidth - sizes[index].count))
            output.write(sizes[index])
            output.write("  ")
            // Where the storage keeps no date (an S3 folder): a dash as wide as a date.
            output.write(node.knownModificationDate.map { dates.date($0) } ?? "-" + String(repeating: " ", count: 15))
            output.write("  ")
            output.line(Formatting.kind(node) { [registry = service.registry, language] identifier in
                registry.type(withIdentifier: identifier)?.name(in: language) ?? identifier
            })
        }
    }

    func changeFolder(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "cd")
        guard arguments.operands.count <= 1 else { throw usage("cd") }
        let path = try arguments.operands.first.map { (text) throws(CofferError) in try resolve(text) } ?? .root()
        let node = try await perform(StatItem(path))
        guard node.kind != .file else { throw CofferError(.notADirectory, path: path) }
        setCurrentFolder(path)
    }

    func tree(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "tree")
        guard arguments.operands.count <= 1 else { throw usage("tree") }
        var depth: Int?
        if let text = arguments.options["L"] {
            guard let value = Int(text), value > 0 else { throw usage("tree") }
            depth = value
        }
        let path = try resolve(arguments.operands.first ?? ".")
        let root = try await perform(StatItem(path))
        guard root.kind != .file else { throw CofferError(.notADirectory, path: path) }
        let walk = try await perform(WalkTree(path, maxDepth: depth, includeHidden: arguments.flags.contains("a")))
        output.line(shown(arguments.operands.first ?? path.description))
        // For each folder on the current branch, whether it was the last of its folder's items.
        var open: [Bool] = []
        var counts = (folders: 0, files: 0)
        _ = try await walk.visit { entry in
            open.removeLast(max(0, open.count - (entry.depth - 1)))
            let prefix = open.map { $0 ? "    " : "│   " }.joined()
            guard let item = entry.node else {
                output.line("\(prefix)[\(entry.error?.userMessage(in: language, hints: .repl).text ?? "")]")
                return
            }
            output.line(prefix + (entry.isLast ? "└── " : "├── ") + styled(item) + (item.kind == .folder ? "/" : ""))
            if item.kind == .file { counts.files += 1 } else { counts.folders += 1 }
            open.append(entry.isLast)
        }
        output.line()
        output.line(Self.counted(folders: counts.folders, files: counts.files, language))
    }

    func info(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "info")
        guard !arguments.operands.isEmpty else { throw usage("info") }
        for (index, text) in arguments.operands.enumerated() {
            let node = try await perform(StatItem(try resolve(text)))
            if index > 0 { output.line() }
            let yes = LocalizedText("yes", "是")(language), no = LocalizedText("no", "否")(language)
            var rows: [(LocalizedText, String)] = [
                (LocalizedText("Name", "名称"), node.name.isEmpty ? "/" : shown(node.name)),
                (LocalizedText("Path", "路径"), shown(node.path.description)),
                (LocalizedText("Kind", "种类"), Self.kindName(node, language)),
                (LocalizedText("Type", "类型"), typeName(node.typeIdentifier)),
            ]
            if node.kind == .file && node.special == nil {
                rows += await contentRows(node)
            }
            if let size = node.contentSize {
                rows.append((LocalizedText("Size", "大小"), "\(Formatting.size(size)) (\(size) bytes)"))
            }
            rows.append((LocalizedText("Modified", "修改时间"), node.knownModificationDate.map(Formatting.dateWithSeconds) ?? "-"))
            rows.append((LocalizedText("Created", "创建时间"),
                         node.creationDate.map(Formatting.dateWithSeconds) ?? LocalizedText("unknown", "未知")(language)))
            rows.append((LocalizedText("Hidden", "隐藏"), node.isHidden ? yes : no))
            rows.append((LocalizedText("Backup", "备份"), node.isExcludedFromBackup
                         ? LocalizedText("excluded", "不备份")(language) : LocalizedText("included", "备份")(language)))
            if let target = node.linkTarget { rows.append((LocalizedText("Link to", "链接到"), target)) }
            if let tags = try? await perform(ReadTags(node.path)), !tags.isEmpty {
                rows.append((LocalizedText("Tags", "标签"), shown(tags.joined(separator: ", "))))
            }
            if let version = node.version { rows.append((LocalizedText("Version", "版本"), version.token)) }
            let width = rows.reduce(0) { max($0, Formatting.width($1.0(language))) }
            for (label, value) in rows {
                output.line("\(Formatting.padded(label(language) + ":", to: width + 1))  \(value)")
            }
        }
    }

    /// What the content of a file says: its type by libmagic, a warning when the name
    /// disagrees, and for text its encoding. A file that cannot be read only loses these rows.
    private func contentRows(_ node: FileNode) async -> [(LocalizedText, String)] {
        var rows: [(LocalizedText, String)] = []
        if let type = try? await perform(AssessType(node.path)), let content = type.byContent {
            let label = LocalizedText("By content", "按内容")
            if type.isMismatch {
                rows.append((label, typeName(content) + LocalizedText(" — does not match the name", "，与名称不符")(language)))
            } else {
                rows.append((label, typeName(content)))
            }
        }
        if let charset = try? await session.withText(of: node.path, { $0.charset }) {
            rows.append((LocalizedText("Encoding", "编码"), charset.name))
        }
        return rows
    }

    /// A name coloured by kind when colours are on: folders, packages and special items
    /// each look different from plain files.
    func styled(_ node: FileNode) -> String {
        let name = shown(node.name)
        if node.special != nil { return outputStyle.special(name) }
        switch node.kind {
        case .folder: return outputStyle.folder(name)
        case .package: return outputStyle.package(name)
        case .file: return name
        }
    }

    /// `3 folders, 1 file` / `3 个文件夹，1 个文件`.
    static func counted(folders: Int, files: Int, _ language: Language) -> String {
        LocalizedText("\(folders) \(folders == 1 ? "folder" : "folders"), \(files) \(files == 1 ? "file" : "files")",
                      "\(folders) 个文件夹，\(files) 个文件")(language)
    }

    static func kindName(_ node: FileNode, _ language: Language) -> String {
        if let special = node.special {
            switch special {
            case .symbolicLink: return LocalizedText("symbolic link (never followed)", "符号链接（不会被跟随）")(language)
            case .fifo: return LocalizedText("named pipe (never opened)", "命名管道（不会被打开）")(language)
            case .socket: return LocalizedText("socket (never opened)", "套接字（不会被打开）")(language)
            case .device: return LocalizedText("device (never opened)", "设备文件（不会被打开）")(language)
            }
        }
        switch node.kind {
        case .folder: return LocalizedText("folder", "文件夹")(language)
        case .package: return LocalizedText("package", "包")(language)
        case .file: return LocalizedText("file", "文件")(language)
        }
    }

    /// `du [path…]`: as GNU du, a folder that cannot be read is named on stderr, its size
    /// left out of the total, and the status is 1.
    func diskUsage(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "du")
        var sawUnreadable = false
        for text in arguments.operands.isEmpty ? ["."] : arguments.operands {
            let path = try resolve(text)
            let usage = try await perform(MeasureDiskUsage(path))
            for error in usage.unreadable { report(error) }
            sawUnreadable = sawUnreadable || !usage.unreadable.isEmpty
            let summary = Self.counted(folders: usage.folders, files: usage.files, language)
            output.line("\(Formatting.size(usage.bytes))\t\(usage.bytes)\t\(shown(path.description))\t(\(summary))")
        }
        if sawUnreadable { throw Reported() }
    }

    /// `fetch`: each file read through (into a remote mount's cache), with a progress bar.
    func fetch(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "fetch")
        guard !arguments.operands.isEmpty else { throw usage("fetch") }
        for text in arguments.operands {
            let path = try resolve(text)
            let node = try await perform(FetchItem(path), progress: LocalizedText("Fetching", "正在下载"))
            output.line("\(shown(path.description))\t\(Formatting.size(node.size))")
        }
    }

    /// The mounts, then the favourites (`fav`), which are places to go as the mounts are.
    func showMounts() async {
        for mount in service.mounts where mount.isVisible {
            let access = mount.isWritable ? LocalizedText("read-write", "可读写")(language)
                                          : LocalizedText("read-only", "只读")(language)
            output.line("\(mount.name):\t\(access)")
        }
        let favourites = (try? await perform(ListFavourites())) ?? []
        guard !favourites.isEmpty else { return }
        output.line(LocalizedText("Favourites:", "收藏：")(language))
        for status in favourites { output.line("  " + describe(status)) }
    }

    func help(_ words: ArraySlice<String>) throws(CofferError) {
        guard let name = words.first else {
            let width = CommandHelp.all.reduce(0) { max($0, $1.name.count) }
            for command in CommandHelp.all {
                output.line("\(Formatting.padded(command.name, to: width))  \(command.summary(language))")
            }
            output.line()
            output.line(LocalizedText("Run “help COMMAND” for usage and examples.", "运行“help 命令名”查看用法和示例。")(language))
            output.line(LocalizedText(
                "At the prompt, Tab completes commands and names and Ctrl-C cancels a running command.",
                "在提示符下，Tab 键补全命令和名称，Ctrl-C 取消正在运行的命令。")(language))
            return
        }
        guard let command = CommandHelp.named(name) else {
            throw CofferError(.invalidArgument, detail: LocalizedText("unknown command “\(name)”", "未知命令“\(name)”")(language))
        }
        output.line(LocalizedText("Usage: ", "用法：")(language) + command.usage)
        output.line(command.summary(language))
        if !command.details(language).isEmpty { output.line(command.details(language)) }
        if !command.examples.isEmpty {
            output.line(LocalizedText("Examples:", "示例：")(language))
            for example in command.examples { output.line("  \(example)") }
        }
    }
}
