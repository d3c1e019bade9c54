public import CofferCore

extension MessageHints {
    /// What the REPL suggests, naming its own commands, where Core's hint is general.
    public static let repl = MessageHints([
        .isADirectory: LocalizedText("Pick a file inside it (ls lists what it holds); cp and export take folders with -r and as they are.",
                                     "请选择其中的文件（ls 可列出其内容）；cp 加 -r、export 直接即可处理文件夹。"),
        .unsupported: LocalizedText("Links, pipes and devices are listed but never opened; binary files are shown with info.",
                                    "链接、管道和设备文件只会被列出，不会被打开；二进制文件请用 info 查看。"),
        .unknownMount: LocalizedText("Run “mounts” to see the mounts there are.", "运行“mounts”查看现有挂载点。"),
        .invalidArgument: LocalizedText("Run “help” with the command's name to see how to use it.", "运行“help 命令名”查看用法。"),
        .changedSinceRead: LocalizedText("Look at it again (cat, info) and redo the change, or write with --replace (what is there is kept as a version).",
                                         "请重新查看（cat、info）后再修改，或用 --replace 写入（现有内容保留为历史版本）。"),
        .hostAccessDenied: LocalizedText("Coffer's own container is never a host folder: name a place outside it.",
                                         "Coffer 自己的容器不能作为本机文件夹使用：请指定容器以外的位置。"),
    ])
}
