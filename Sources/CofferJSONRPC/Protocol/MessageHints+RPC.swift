public import CofferCore

extension MessageHints {
    /// What the JSON-RPC server suggests, naming its methods and options, where Core's hint
    /// is general.
    public static let rpc = MessageHints([
        .unknownMount: LocalizedText("The result of “initialize” lists the mounts there are.", "“initialize”的结果列出了现有挂载点。"),
        .invalidArgument: LocalizedText("Check the params against the method's description in the documentation.",
                                        "请对照文档中该方法的说明检查参数。"),
        .hostAccessDenied: LocalizedText("Only folders allowed when Coffer was started can be used (coffer rpc --allow-host DIR).",
                                         "只能使用启动时允许的文件夹（coffer rpc --allow-host 目录）。"),
        .tooLarge: LocalizedText("Move it in parts: files/upload to write it, offset and length to read it.",
                                 "请分块处理：写入用 files/upload，读取用 offset 和 length。"),
    ])
}
