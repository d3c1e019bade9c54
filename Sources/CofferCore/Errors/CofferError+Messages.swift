import Foundation

/// What a person reads when an operation fails: one sentence that says what happened,
/// and one that says what to do next.
public struct UserMessage: Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var hint: String

    public var description: String { hint.isEmpty ? text : "\(text) \(hint)" }
}

extension CofferError {
    /// The message for this error in `language`, naming the virtual path (never a host path).
    public func userMessage(in language: Language) -> UserMessage {
        let item = path.map { "“\($0.description)”" }
        let entry = Self.catalog[kind.identifier]!
        let text = entry.text(item, detail, language)
        return UserMessage(text: text, hint: entry.hint(language))
    }

    private struct Entry: Sendable {
        var text: @Sendable (_ item: String?, _ detail: String?, _ language: Language) -> String
        var hint: LocalizedText
    }

    /// Builds a message that names the item when there is one.
    private static func entry(_ withItem: LocalizedText, _ withoutItem: LocalizedText, hint: LocalizedText) -> Entry {
        Entry(text: { item, _, language in
            guard let item else { return withoutItem(language) }
            return withItem(language).replacingOccurrences(of: "%@", with: item)
        }, hint: hint)
    }

    private static let catalog: [String: Entry] = [
        "noSuchFile": entry(
            LocalizedText("%@ doesn't exist.", "%@ 不存在。"),
            LocalizedText("The item doesn't exist.", "文件不存在。"),
            hint: LocalizedText("It may have been moved or deleted; check the name and list the folder again.",
                                "可能已被移动或删除，请检查名称后重新列出文件夹。")),
        "fileExists": entry(
            LocalizedText("An item named %@ already exists.", "已存在名为 %@ 的项目。"),
            LocalizedText("An item with that name already exists.", "已存在同名项目。"),
            hint: LocalizedText("Choose another name, or ask to keep both or replace.",
                                "请换一个名称，或选择“保留两者”或“替换”。")),
        "notADirectory": entry(
            LocalizedText("%@ is not a folder.", "%@ 不是文件夹。"),
            LocalizedText("A folder was expected here.", "此处需要一个文件夹。"),
            hint: LocalizedText("Check the path; a file cannot contain other items.",
                                "请检查路径，文件里不能再放其他项目。")),
        "isADirectory": entry(
            LocalizedText("%@ is a folder.", "%@ 是文件夹。"),
            LocalizedText("A file was expected, but this is a folder.", "此处需要文件，但这是一个文件夹。"),
            hint: LocalizedText("Pick a file inside it, or use the folder form of the command (for example cp -r).",
                                "请选择其中的文件，或使用文件夹形式的命令（例如 cp -r）。")),
        "directoryNotEmpty": entry(
            LocalizedText("The folder %@ is not empty.", "文件夹 %@ 不是空的。"),
            LocalizedText("The folder is not empty.", "文件夹不是空的。"),
            hint: LocalizedText("Move or remove what is inside first.", "请先移走或删除其中的内容。")),
        "noPermission": entry(
            LocalizedText("You don't have permission to use %@.", "没有权限访问 %@。"),
            LocalizedText("You don't have permission to do that.", "没有执行此操作的权限。"),
            hint: LocalizedText("Check the item's permissions or choose another place.",
                                "请检查项目的权限，或换一个位置。")),
        "outOfSpace": entry(
            LocalizedText("There isn't enough space to write %@.", "空间不足，无法写入 %@。"),
            LocalizedText("There isn't enough space on the disk.", "磁盘空间不足。"),
            hint: LocalizedText("Free some space, then try again; nothing partial was kept.",
                                "请清理空间后重试；未保留任何不完整的文件。")),
        "corruptFile": entry(
            LocalizedText("%@ could not be read; it may be damaged.", "无法读取 %@，文件可能已损坏。"),
            LocalizedText("The file could not be read; it may be damaged.", "无法读取文件，文件可能已损坏。"),
            hint: LocalizedText("Try importing it again.", "建议重新导入该文件。")),
        "invalidName": Entry(text: { item, detail, language in
            let reason: LocalizedText = switch detail {
            case "too-long": LocalizedText("is longer than 255 bytes", "超过 255 字节")
            case "not-utf8": LocalizedText("is not valid UTF-8", "不是有效的 UTF-8")
            case "slash": LocalizedText("contains “/”", "包含“/”")
            case "nul": LocalizedText("contains a NUL character", "包含空字符（NUL）")
            case "dot-name": LocalizedText("cannot be “.” or “..”", "不能是“.”或“..”")
            case "empty": LocalizedText("is empty", "为空")
            default: LocalizedText("is not allowed", "不被允许")
            }
            if let item {
                return language == .english ? "The name for \(item) \(reason(language))."
                                             : "\(item) 的名称\(reason(language))。"
            }
            return language == .english ? "That name \(reason(language))." : "该名称\(reason(language))。"
        }, hint: LocalizedText("Use a shorter name without “/” or NUL characters.",
                               "请使用不含“/”或空字符的较短名称。")),
        "outsideSandbox": entry(
            LocalizedText("%@ leads outside the space Coffer manages.", "%@ 指向了 Coffer 管理范围之外的位置。"),
            LocalizedText("That path leads outside the space Coffer manages.", "该路径指向了 Coffer 管理范围之外的位置。"),
            hint: LocalizedText("Use a path inside the mount; links that point out are never followed.",
                                "请使用挂载点内的路径；指向外部的链接不会被跟随。")),
        "readOnly": entry(
            LocalizedText("%@ can't be changed here.", "%@ 在此处不可修改。"),
            LocalizedText("This place can't be changed.", "此位置不可修改。"),
            hint: LocalizedText("Copy the item to files: to work on it.", "请先把项目复制到 files: 再修改。")),
        "cancelled": entry(
            LocalizedText("The operation on %@ was cancelled.", "对 %@ 的操作已取消。"),
            LocalizedText("The operation was cancelled.", "操作已取消。"),
            hint: LocalizedText("Nothing half-done was left; run it again when you are ready.",
                                "没有留下未完成的内容，可随时重新执行。")),
        "unsupported": Entry(text: { item, detail, language in
            if detail == "not-text" {
                guard let item else {
                    return language == .english ? "This file isn't text." : "该文件不是文本。"
                }
                return language == .english ? "\(item) isn't text in UTF-8, UTF-16 or GB 18030."
                                            : "\(item) 不是 UTF-8、UTF-16 或 GB 18030 编码的文本。"
            }
            guard let item else { return language == .english ? "That isn't supported here." : "此处不支持该操作。" }
            return language == .english ? "\(item) can't be used this way." : "\(item) 不支持此操作。"
        }, hint: LocalizedText("Links, pipes and devices are listed but never opened; binary files are shown with info.",
                               "链接、管道和设备文件只会被列出，不会被打开；二进制文件请用 info 查看。")),
        "invalidOperation": entry(
            LocalizedText("That can't be done with %@.", "无法对 %@ 执行该操作。"),
            LocalizedText("That operation isn't possible.", "无法执行该操作。"),
            hint: LocalizedText("A folder can't be moved or copied into itself, and a mount's root can't be renamed.",
                                "文件夹不能移动或复制到自身内部，挂载点的根目录也不能重命名。")),
        "ioError": entry(
            LocalizedText("Reading or writing %@ failed.", "读写 %@ 时出错。"),
            LocalizedText("A read or write failed.", "读写时出错。"),
            hint: LocalizedText("Try again; if it keeps failing, the disk may have a problem.",
                                "请重试；如果一直失败，磁盘可能有问题。")),
        "unknownMount": Entry(text: { _, detail, language in
            let name = detail.map { "“\($0):”" } ?? ""
            return language == .english ? "There is no mount named \(name)." : "没有名为 \(name) 的挂载点。"
        }, hint: LocalizedText("Run “mounts” to see the mounts there are.", "运行“mounts”查看现有挂载点。")),
        "damagedContainer": Entry(text: { _, detail, language in
            let part = detail.map { "“\($0)”" } ?? ""
            return language == .english ? "Coffer's storage is damaged: \(part) should be a folder."
                                        : "Coffer 的存储已损坏：\(part) 应该是一个文件夹。"
        }, hint: LocalizedText("Move that item out of the container folder, then start Coffer again.",
                               "请把该项目移出容器文件夹，然后重新启动 Coffer。")),
        "typeNotAllowed": Entry(text: { item, detail, language in
            let subject = item ?? (language == .english ? "This file" : "该文件")
            let kind = detail.map { language == .english ? " (it is \($0))" : "（实际为 \($0)）" } ?? ""
            return language == .english ? "\(subject) isn't one of the allowed types\(kind)."
                                        : "\(subject) 不属于允许的类型\(kind)。"
        }, hint: LocalizedText("Coffer checks the content, not only the extension; choose a file of an allowed type.",
                               "Coffer 会检查文件内容而不只是扩展名；请选择允许类型的文件。")),
        "staleBookmark": Entry(text: { _, detail, language in
            let name = detail.map { "“\($0)”" } ?? ""
            return language == .english ? "The bookmarked file \(name) was deleted or replaced."
                                        : "书签指向的文件 \(name) 已被删除或替换。"
        }, hint: LocalizedText("Open the file again to make a new bookmark.", "请重新打开该文件以创建新书签。")),
        "hostAccessDenied": Entry(text: { _, detail, language in
            let name = detail.map { "“\($0)”" } ?? (language == .english ? "that place" : "该位置")
            return language == .english ? "Coffer may not use \(name) on this computer."
                                        : "Coffer 无权使用本机上的 \(name)。"
        }, hint: LocalizedText("Only folders allowed when Coffer was started can be used (coffer rpc --allow-host DIR).",
                               "只能使用启动时允许的文件夹（coffer rpc --allow-host 目录）。")),
        "tooLarge": Entry(text: { item, detail, language in
            let limit = detail.map { language == .english ? " (the limit is \($0))" : "（上限为 \($0)）" } ?? ""
            guard let item else {
                return language == .english ? "That is too large to send in one request\(limit)."
                                            : "数据太大，无法在一次请求中发送\(limit)。"
            }
            return language == .english ? "The data for \(item) is too large to send in one request\(limit)."
                                        : "\(item) 的数据太大，无法在一次请求中发送\(limit)。"
        }, hint: LocalizedText("Send it in chunks with files/upload.", "请使用 files/upload 分块发送。")),
        "notFoundUpload": Entry(text: { _, detail, language in
            let id = detail.map { "“\($0)”" } ?? ""
            return language == .english ? "There is no upload \(id) in progress."
                                        : "没有进行中的上传 \(id)。"
        }, hint: LocalizedText("It was committed, aborted, or expired after an hour without data; begin a new one.",
                               "该上传已提交、已中止，或因一小时无数据而过期；请重新开始。")),
        "invalidArgument": Entry(text: { _, detail, language in
            let what = detail ?? ""
            return language == .english ? "Invalid arguments: \(what)." : "参数无效：\(what)。"
        }, hint: LocalizedText("Run “help” with the command's name to see how to use it.",
                               "运行“help 命令名”查看用法。")),
    ]
}
