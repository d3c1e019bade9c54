import Foundation

/// What a person reads when an operation fails: one sentence that says what happened,
/// and one that says what to do next.
public struct UserMessage: Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var hint: String

    public var description: String { hint.isEmpty ? text : "\(text) \(hint)" }
}

/// Hints a front end gives in its own words instead of Core's, which name no command or
/// method: the REPL names its commands (“Run “mounts”…”), the JSON-RPC server its methods.
/// A kind a front end leaves out keeps Core's hint.
public struct MessageHints: Sendable {
    private let hints: [CofferError.Kind: LocalizedText]

    public init(_ hints: [CofferError.Kind: LocalizedText] = [:]) { self.hints = hints }

    /// Core's hints only.
    public static let none = MessageHints()

    public subscript(kind: CofferError.Kind) -> LocalizedText? { hints[kind] }
}

extension CofferError {
    /// The message for this error in `language`, naming the virtual path (never a host
    /// path), with the front end's hint for its kind where it gives one.
    public func userMessage(in language: Language, hints: MessageHints = .none) -> UserMessage {
        let item = path.map { "“\($0.description)”" }
        let hint = hints[kind] ?? Self.hint(for: kind.code)
        return UserMessage(text: Self.text(for: kind.code, item: item, detail: detail, language), hint: hint(language))
    }

    /// `withItem` with the item's name for `%@`, or `withoutItem` when there is none.
    private static func naming(_ item: String?, _ withItem: LocalizedText, _ withoutItem: LocalizedText,
                               _ language: Language) -> String {
        guard let item else { return withoutItem(language) }
        return withItem(language).replacingOccurrences(of: "%@", with: item)
    }

    /// The sentence that says what happened. A switch over every kind: a new kind does not
    /// compile until it has its message in both languages.
    private static func text(for code: Kind.Code, item: String?, detail: String?, _ language: Language) -> String {
        let english = language == .english
        switch code {
        case .noSuchFile:
            return naming(item, LocalizedText("%@ doesn't exist.", "%@ 不存在。"),
                          LocalizedText("The item doesn't exist.", "文件不存在。"), language)
        case .fileExists:
            return naming(item, LocalizedText("An item named %@ already exists.", "已存在名为 %@ 的项目。"),
                          LocalizedText("An item with that name already exists.", "已存在同名项目。"), language)
        case .notADirectory:
            return naming(item, LocalizedText("%@ is not a folder.", "%@ 不是文件夹。"),
                          LocalizedText("A folder was expected here.", "此处需要一个文件夹。"), language)
        case .isADirectory:
            return naming(item, LocalizedText("%@ is a folder.", "%@ 是文件夹。"),
                          LocalizedText("A file was expected, but this is a folder.", "此处需要文件，但这是一个文件夹。"), language)
        case .directoryNotEmpty:
            return naming(item, LocalizedText("The folder %@ is not empty.", "文件夹 %@ 不是空的。"),
                          LocalizedText("The folder is not empty.", "文件夹不是空的。"), language)
        case .noPermission:
            return naming(item, LocalizedText("You don't have permission to use %@.", "没有权限访问 %@。"),
                          LocalizedText("You don't have permission to do that.", "没有执行此操作的权限。"), language)
        case .outOfSpace:
            return naming(item, LocalizedText("There isn't enough space to write %@.", "空间不足，无法写入 %@。"),
                          LocalizedText("There isn't enough space on the disk.", "磁盘空间不足。"), language)
        case .corruptFile:
            return naming(item, LocalizedText("%@ could not be read; it may be damaged.", "无法读取 %@，文件可能已损坏。"),
                          LocalizedText("The file could not be read; it may be damaged.", "无法读取文件，文件可能已损坏。"),
                          language)
        case .invalidName:
            let reason: LocalizedText = switch detail {
            case "too-long": LocalizedText("is longer than 255 bytes", "超过 255 字节")
            case "not-utf8": LocalizedText("is not valid UTF-8", "不是有效的 UTF-8")
            case "slash": LocalizedText("contains “/”", "包含“/”")
            case "nul": LocalizedText("contains a NUL character", "包含空字符（NUL）")
            case "dot-name": LocalizedText("cannot be “.” or “..”", "不能是“.”或“..”")
            case "empty": LocalizedText("is empty", "为空")
            default: LocalizedText("is not allowed", "不被允许")
            }
            guard let item else { return english ? "That name \(reason(language))." : "该名称\(reason(language))。" }
            return english ? "The name for \(item) \(reason(language))." : "\(item) 的名称\(reason(language))。"
        case .outsideSandbox:
            return naming(item, LocalizedText("%@ leads outside the space Coffer manages.", "%@ 指向了 Coffer 管理范围之外的位置。"),
                          LocalizedText("That path leads outside the space Coffer manages.", "该路径指向了 Coffer 管理范围之外的位置。"),
                          language)
        case .readOnly:
            return naming(item, LocalizedText("%@ can't be changed here.", "%@ 在此处不可修改。"),
                          LocalizedText("This place can't be changed.", "此位置不可修改。"), language)
        case .cancelled:
            return naming(item, LocalizedText("The operation on %@ was cancelled.", "对 %@ 的操作已取消。"),
                          LocalizedText("The operation was cancelled.", "操作已取消。"), language)
        case .unsupported:
            if detail == "not-text" {
                guard let item else { return english ? "This file isn't text." : "该文件不是文本。" }
                return english ? "\(item) isn't text in UTF-8, UTF-16 or GB 18030."
                               : "\(item) 不是 UTF-8、UTF-16 或 GB 18030 编码的文本。"
            }
            guard let item else { return english ? "That isn't supported here." : "此处不支持该操作。" }
            return english ? "\(item) can't be used this way." : "\(item) 不支持此操作。"
        case .invalidOperation:
            return naming(item, LocalizedText("That can't be done with %@.", "无法对 %@ 执行该操作。"),
                          LocalizedText("That operation isn't possible.", "无法执行该操作。"), language)
        case .ioError:
            return naming(item, LocalizedText("Reading or writing %@ failed.", "读写 %@ 时出错。"),
                          LocalizedText("A read or write failed.", "读写时出错。"), language)
        case .unknownMount:
            let name = detail.map { "“\($0):”" } ?? ""
            return english ? "There is no mount named \(name)." : "没有名为 \(name) 的挂载点。"
        case .damagedContainer:
            let part = detail.map { "“\($0)”" } ?? ""
            return english ? "Coffer's storage is damaged: \(part) should be a folder."
                           : "Coffer 的存储已损坏：\(part) 应该是一个文件夹。"
        case .invalidArgument:
            return english ? "Invalid arguments: \(detail ?? "")." : "参数无效：\(detail ?? "")。"
        case .typeNotAllowed:
            let subject = item ?? (english ? "This file" : "该文件")
            let kind = detail.map { english ? " (it is \($0))" : "（实际为 \($0)）" } ?? ""
            return english ? "\(subject) isn't one of the allowed types\(kind)." : "\(subject) 不属于允许的类型\(kind)。"
        case .staleBookmark:
            let name = detail.map { "“\($0)”" } ?? ""
            return english ? "The bookmarked file \(name) was deleted or replaced." : "书签指向的文件 \(name) 已被删除或替换。"
        case .hostAccessDenied:
            let name = detail.map { "“\($0)”" } ?? (english ? "that place" : "该位置")
            return english ? "Coffer may not use \(name) on this computer." : "Coffer 无权使用本机上的 \(name)。"
        case .tooLarge:
            let limit = detail.map { english ? " (the limit is \($0))" : "（上限为 \($0)）" } ?? ""
            guard let item else {
                return english ? "That is too large to send in one request\(limit)." : "数据太大，无法在一次请求中发送\(limit)。"
            }
            return english ? "The data for \(item) is too large to send in one request\(limit)."
                           : "\(item) 的数据太大，无法在一次请求中发送\(limit)。"
        case .notFoundUpload:
            let id = detail.map { "“\($0)”" } ?? ""
            return english ? "There is no upload \(id) in progress." : "没有进行中的上传 \(id)。"
        }
    }

    /// What to do next, in words that fit every front end (no command or method names).
    private static func hint(for code: Kind.Code) -> LocalizedText {
        switch code {
        case .noSuchFile:
            LocalizedText("It may have been moved or deleted; check the name and list the folder again.",
                          "可能已被移动或删除，请检查名称后重新列出文件夹。")
        case .fileExists:
            LocalizedText("Choose another name, or ask to keep both or replace.", "请换一个名称，或选择“保留两者”或“替换”。")
        case .notADirectory:
            LocalizedText("Check the path; a file cannot contain other items.", "请检查路径，文件里不能再放其他项目。")
        case .isADirectory:
            LocalizedText("Pick a file inside it, or ask for the whole folder.", "请选择其中的文件，或对整个文件夹进行操作。")
        case .directoryNotEmpty:
            LocalizedText("Move or remove what is inside first.", "请先移走或删除其中的内容。")
        case .noPermission:
            LocalizedText("Check the item's permissions or choose another place.", "请检查项目的权限，或换一个位置。")
        case .outOfSpace:
            LocalizedText("Free some space, then try again; nothing partial was kept.", "请清理空间后重试；未保留任何不完整的文件。")
        case .corruptFile:
            LocalizedText("Try importing it again.", "建议重新导入该文件。")
        case .invalidName:
            LocalizedText("Use a shorter name without “/” or NUL characters.", "请使用不含“/”或空字符的较短名称。")
        case .outsideSandbox:
            LocalizedText("Use a path inside the mount; links that point out are never followed.",
                          "请使用挂载点内的路径；指向外部的链接不会被跟随。")
        case .readOnly:
            LocalizedText("Copy the item to files: to work on it.", "请先把项目复制到 files: 再修改。")
        case .cancelled:
            LocalizedText("Nothing half-done was left; run it again when you are ready.", "没有留下未完成的内容，可随时重新执行。")
        case .unsupported:
            LocalizedText("Links, pipes and devices are listed but never opened, and only text can be shown as text.",
                          "链接、管道和设备文件只会被列出，不会被打开；只有文本文件才能以文本显示。")
        case .invalidOperation:
            LocalizedText("A folder can't be moved or copied into itself, and a mount's root can't be renamed.",
                          "文件夹不能移动或复制到自身内部，挂载点的根目录也不能重命名。")
        case .ioError:
            LocalizedText("Try again; if it keeps failing, the disk may have a problem.", "请重试；如果一直失败，磁盘可能有问题。")
        case .unknownMount:
            LocalizedText("Check the name before the colon against the list of mounts.", "请对照挂载点列表检查冒号前的名称。")
        case .damagedContainer:
            LocalizedText("Move that item out of the container folder, then start Coffer again.",
                          "请把该项目移出容器文件夹，然后重新启动 Coffer。")
        case .invalidArgument:
            LocalizedText("Check the arguments against the documentation and try again.", "请对照说明检查参数后重试。")
        case .typeNotAllowed:
            LocalizedText("Coffer checks the content, not only the extension; choose a file of an allowed type.",
                          "Coffer 会检查文件内容而不只是扩展名；请选择允许类型的文件。")
        case .staleBookmark:
            LocalizedText("Open the file again to make a new bookmark.", "请重新打开该文件以创建新书签。")
        case .hostAccessDenied:
            LocalizedText("Only folders allowed when Coffer was started can be used, and never Coffer's own container.",
                          "只能使用启动时允许的文件夹，且不能使用 Coffer 自己的容器。")
        case .tooLarge:
            LocalizedText("Send it in smaller pieces.", "请分成较小的部分发送。")
        case .notFoundUpload:
            LocalizedText("It was committed, aborted, or expired after an hour without data; begin a new one.",
                          "该上传已提交、已中止，或因一小时无数据而过期；请重新开始。")
        }
    }
}
