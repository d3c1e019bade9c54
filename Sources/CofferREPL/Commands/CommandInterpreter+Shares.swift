import CofferCore
import CofferRuntime
import FileService
import Foundation

/// `share`, `shares`, `unshare`: links to items, answered by `coffer serve` (``Share``).
extension CommandInterpreter {
    func share(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "share")
        guard arguments.operands.count == 1 else { throw usage("share") }
        let path = try resolve(arguments.operands[0])
        let expires = try arguments.options["expires"].map { (text) throws(CofferError) in try Share.parseExpiry(text) }
        var downloads: Int?
        if let text = arguments.options["downloads"] {
            guard let count = Int(text), count > 0 else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "--downloads \(text): use a number from 1", "--downloads \(text)：请用不小于 1 的数字")(language))
            }
            downloads = count
        }
        var password: String?
        if arguments.flags.contains("password") { password = try await askPassword() }
        let made = try await perform(CreateShare(path, expires: expires, password: password, downloadLimit: downloads,
                                                 upload: arguments.flags.contains("upload")))
        output.line(describe(made))
    }

    func listShares(_ words: ArraySlice<String>) async throws {
        _ = try parse(words, as: "shares")
        let shares = try await perform(ListShares())
        guard !shares.isEmpty else {
            output.line(LocalizedText("No shares; “share PATH” makes a link.", "没有共享；用“share 路径”创建链接。")(language))
            return
        }
        for share in shares { output.line(describe(share)) }
    }

    func unshare(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "unshare")
        guard !arguments.operands.isEmpty else { throw usage("unshare") }
        for id in arguments.operands {
            let revoked = try await perform(RevokeShare(id))
            output.line(LocalizedText("\(revoked.link) no longer answers (\(revoked.path))",
                                      "\(revoked.link) 已停止共享（\(revoked.path)）")(language))
        }
    }

    /// `/s/ID  files:/Docs/report.pdf  file  expires 2026-12-09 10:00  password  1 of 3 downloads  upload  (expired)`.
    func describe(_ share: ShareSummary) -> String {
        var parts = [share.link, shown(share.path), share.kind == "folder" ? LocalizedText("folder", "文件夹")(language)
                                                                          : LocalizedText("file", "文件")(language)]
        if let expires = share.expires {
            parts.append(LocalizedText("expires ", "到期 ")(language) + Formatting.date(expires))
        }
        if share.hasPassword { parts.append(LocalizedText("password", "有密码")(language)) }
        if let limit = share.downloadLimit {
            parts.append(LocalizedText("\(share.downloads) of \(limit) downloads", "已下载 \(share.downloads)/\(limit) 次")(language))
        }
        if share.upload { parts.append(LocalizedText("upload", "可上传")(language)) }
        switch share.state {
        case .active: break
        case .expired: parts.append(LocalizedText("(expired)", "（已过期）")(language))
        case .exhausted: parts.append(LocalizedText("(no downloads left)", "（下载次数已用完）")(language))
        }
        return parts.joined(separator: "  ")
    }

    /// The link's password: asked twice at a terminal, else the first line of standard input.
    private func askPassword() async throws(CofferError) -> String {
        if let ask {
            guard let first = await ask(LocalizedText("Password for the link: ", "链接密码：")(language)),
                  let second = await ask(LocalizedText("Again: ", "再输入一次：")(language))
            else { throw CofferError(.cancelled) }
            guard first == second else {
                throw CofferError(.invalidArgument, detail: LocalizedText("the two passwords differ", "两次输入的密码不一致")(language))
            }
            return first
        }
        let input = try await Self.readStandardInput(limit: 4096)
        let line = String(decoding: input, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        guard !line.isEmpty else {
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "--password reads the password from standard input when there is no terminal",
                "没有终端时，--password 从标准输入读取密码")(language))
        }
        return String(line)
    }
}
