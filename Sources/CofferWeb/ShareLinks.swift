import CofferCore
import CofferHTTPServer
import CofferPreview
import CofferRuntime
import FileService
import Foundation
import Synchronization

/// Share links (``Share``) at `/s/ID`, without the access token: plain HTML that works without
/// JavaScript, for whoever has the link.
///
/// - `GET /s/ID` — the shared file (name, size, type, a thumbnail, the download) or folder
///   (a listing); `GET /s/ID/p/A/B` — a folder or file below a shared folder;
/// - `GET /s/ID/raw[/A/B]` — a file's bytes, as an attachment, with `Range`;
/// - `GET /s/ID/thumb[/A/B]` — its thumbnail;
/// - `GET /s/ID/zip[/A/B]` — a shared folder, or one below it, as a `.zip` made as it is sent;
/// - `POST /s/ID` — the password form (`password=…`), or files for a drop box
///   (`multipart/form-data`).
///
/// Every request looks the share up again: a revoked share answers 404 and an expired or
/// exhausted one 410 at once, also to the next range of a download under way. Names below a
/// folder share are checked as every name is (`..` and `.` are refused, encoded or not) and no
/// link is followed (``FileService/sharedItem(_:_:)``). Every access is in
/// the audit log: the share, the client's address, the item, the bytes sent.
final class ShareLinks: Sendable {
    let web: WebContext
    let files: FileRoutes
    /// Signs the cookies of share links unlocked with their password; new every start.
    let shareKey: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }()
    /// The sessions of share-link visitors answered now (one per request), by number: a
    /// server that stops stops their work too.
    private let visitors = Mutex<Visitors>(Visitors())
    private struct Visitors {
        var open: [Int: Session] = [:]
        /// Set when the server stops: a visitor let in from then on has its work stopped at once.
        var stopping = false
    }

    init(web: WebContext, files: FileRoutes) {
        self.web = web
        self.files = files
    }

    /// Stops the work of every visitor answered now (the server is stopping).
    func stopVisitors() {
        let open = visitors.withLock { visitors in
            visitors.stopping = true
            return Array(visitors.open.values)
        }
        for visitor in open { visitor.stopWork() }
    }

    func answer(_ exchange: HTTPExchange) -> Int {
        let language = web.language(of: exchange)
        var parts = exchange.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)
        guard let id = parts.first, Share.isWellFormedID(id) else { return sharePage(exchange, 404, gone(language)) }
        parts.removeFirst()
        if parts.last == "" { parts.removeLast() }
        return visiting(exchange, share: id) { visitor in
            shareRequest(exchange, id: id, parts: parts, visitor: visitor, language: language)
        }
    }

    /// Runs `body` in a session of the visitor's own (front end `share`, with the client's
    /// address and the share's ID for the audit log), closed when it returns.
    private func visiting(_ exchange: HTTPExchange, share id: String, _ body: (Session) -> Int) -> Int {
        let client = HTTPRules.client(of: exchange, trustingForwardedFor: web.configuration.trustsForwardedFor)
        let options = SessionOptions(frontEnd: "share", language: web.language(of: exchange), client: client, share: id)
        let visitor: Session
        do { visitor = try web.service.openSession(options) } catch { return web.failure(exchange, error, language: options.language) }
        // A visitor let in as the server stops gets no work done: nothing would wait for it.
        if visitors.withLock({ visitors in
            visitors.open[visitor.number] = visitor
            return visitors.stopping
        }) { visitor.stopWork() }
        defer {
            visitors.withLock { $0.open[visitor.number] = nil }
            // Its work is done by now (each piece was waited for): closing only tidies up.
            let closed = DispatchSemaphore(value: 0)
            Task {
                await visitor.close()
                closed.signal()
            }
            closed.wait()
        }
        return body(visitor)
    }

    private func shareRequest(_ exchange: HTTPExchange, id: String, parts: [String], visitor: Session,
                              language: Language) -> Int {
        let method = exchange.method
        guard case .success(let share) = web.blocking(in: visitor, { () async throws(CofferError) in
            try await visitor.perform(OpenShare(id))
        }) else { return sharePage(exchange, 404, gone(language)) }
        switch share.state() {
        case .active: break
        case .expired, .exhausted: return sharePage(exchange, 410, ended(language))
        }
        if method == "POST" {
            let type = exchange.contentType?.lowercased() ?? ""
            if type.hasPrefix("application/x-www-form-urlencoded") && share.password != nil {
                return unlock(exchange, share, visitor: visitor, language: language)
            }
            guard isUnlocked(exchange, share) else { return sharePage(exchange, 403, passwordForm(share, language, wrong: false)) }
            guard share.allowsUpload, type.hasPrefix("multipart/form-data") else {
                return sharePage(exchange, 405, ShareText.paragraph(LocalizedText("This link takes no uploads.", "此链接不接受上传。")(language)))
            }
            return receive(exchange, share, visitor: visitor, language: language)
        }
        guard method == "GET" || method == "HEAD" else {
            return sharePage(exchange, 405, ShareText.paragraph("GET, HEAD and POST only."))
        }
        guard isUnlocked(exchange, share) else {
            return sharePage(exchange, parts.isEmpty ? 200 : 403, passwordForm(share, language, wrong: false))
        }
        if share.allowsUpload {
            // A drop box shows nothing of what it holds: others' uploads are theirs.
            guard parts.isEmpty else { return sharePage(exchange, 404, gone(language)) }
            return sharePage(exchange, 200, dropBox(share, language, received: []))
        }
        let action = parts.first ?? "p"
        // CivetWeb has decoded the path once (`%2F` is a separator by now, and a `%00` ends it
        // early: a shorter path, never another one); each name is checked as every name is.
        let names = Array(parts.dropFirst())
        let node: FileNode
        switch web.blocking(in: visitor, { () async throws(CofferError) in try await visitor.perform(FindSharedItem(share, names: names)) }) {
        case .success(let item): node = item
        case .failure: return sharePage(exchange, 404, gone(language))
        }
        switch action {
        case "p": return sharePage(exchange, 200, itemPage(share, node, names, visitor: visitor, language))
        case "raw":
            guard node.kind == .file else { return sharePage(exchange, 404, gone(language)) }
            return sendShared(exchange, share, node, visitor: visitor)
        case "zip":
            guard node.kind != .file else { return sharePage(exchange, 404, gone(language)) }
            // A whole zip counts as a download of the share, as a whole file does.
            let folder = node.path
            return sending(exchange, in: visitor, ending: { EndSharedZip(share, folder: folder, $0) }) { beforeLastBytes in
                files.sendZip(exchange, of: node, named: names.last ?? node.name, in: visitor, beforeLastBytes: beforeLastBytes)
            }
        case "thumb":
            guard node.kind == .file else { return web.respond(exchange, 404, text: "") }
            return files.thumbnail(exchange, of: node.path, pixels: ThumbnailSize.normal.pixels, in: visitor, language: language)
        default:
            return sharePage(exchange, 404, gone(language))
        }
    }

    // MARK: Who asks

    private func cookieName(_ share: Share) -> String { "coffer-share-" + share.id }

    /// What the cookie of an unlocked share holds: bound to this server's key and to the
    /// password's hash, so a new server or a new password asks again.
    private func unlockedValue(_ share: Share) -> String? {
        guard let password = share.password,
              let mac = try? Digest.hmacSHA256(key: shareKey, Array((share.id + "|" + password.hash).utf8)) else { return nil }
        return Digest.hex(mac)
    }

    private func isUnlocked(_ exchange: HTTPExchange, _ share: Share) -> Bool {
        guard share.password != nil else { return true }
        guard let expected = unlockedValue(share), let shown = exchange.cookie(cookieName(share)) else { return false }
        return AccessToken.same(shown, expected)
    }

    /// The password posted, tried by the visitor's session (``UnlockShare``: wrong ones are
    /// counted, and past five the client waits); the cookie that keeps it unlocked.
    private func unlock(_ exchange: HTTPExchange, _ share: Share, visitor: Session, language: Language) -> Int {
        // A form cut short or too long for a password is no try: nothing is counted.
        guard case .success(let body) = exchange.readBody(limit: 4096) else {
            return sharePage(exchange, 400, passwordForm(share, language, wrong: false))
        }
        let password = HTTPExchange.formValue(String(decoding: body, as: UTF8.self), "password") ?? ""
        let tried = web.blocking(in: visitor) { () async throws(CofferError) in
            try await visitor.perform(UnlockShare(share, password: password))
        }
        switch tried {
        case .success(.wait(let seconds)):
            return sharePage(exchange, 429, ShareText.paragraph(LocalizedText(
                "Too many wrong passwords: try again in \(seconds) s.", "密码错误次数过多：请 \(seconds) 秒后再试。")(language)),
                headers: "Retry-After: \(seconds)\r\n")
        case .success(.unlocked):
            guard let value = unlockedValue(share) else { fallthrough }
            let cookie = "Set-Cookie: \(cookieName(share))=\(value); Path=/s/\(share.id); HttpOnly; SameSite=Lax\r\n"
            return web.respond(exchange, 303, text: "", headers: cookie + "Location: /s/\(share.id)\r\n")
        case .success(.wrongPassword), .failure:
            return sharePage(exchange, 403, passwordForm(share, language, wrong: true))
        }
    }

    // MARK: Downloads

    /// The bytes of a shared file, as an attachment; a download counts when its last byte is
    /// sent (counted just before, so the next request already sees it), and the share is looked
    /// up again for every request, so a range asked for after it ended is refused.
    private func sendShared(_ exchange: HTTPExchange, _ share: Share, _ node: FileNode, visitor: Session) -> Int {
        let item = node.path
        return sending(exchange, in: visitor, ending: { EndSharedDownload(share, item: item, $0) }) { beforeLastBytes in
            let (status, sent, _) = files.sendFile(exchange, at: item, attachment: true, in: visitor, finishing: beforeLastBytes)
            return (status, sent)
        }
    }

    /// Sends a download with `send` and ends it once, in the visitor's session: just before its
    /// last bytes go when it is complete (`send` calls what it is given then, with the bytes
    /// sent by then), else after it, as partial or refused.
    private func sending<Ending: SharedDownloadEnding>(
        _ exchange: HTTPExchange, in visitor: Session, ending: @escaping @Sendable (SharedDownloadEnd) -> Ending,
        _ send: (_ beforeLastBytes: @escaping (Int64) -> Void) -> (status: Int, sent: Int64)
    ) -> Int {
        let web = self.web
        // A HEAD is answered as a GET would be, but downloads nothing: it neither counts nor is audited.
        if exchange.isHead { return send { _ in }.status }
        var ended = false
        let (status, sent) = send { sent in
            ended = true
            _ = web.blocking(in: visitor) { () async throws(CofferError) in try await visitor.perform(ending(.complete(bytes: sent))) }
        }
        if !ended {
            let end: SharedDownloadEnd = status < 400 ? .partial(bytes: sent) : .refused(status: status)
            _ = web.blocking(in: visitor) { () async throws(CofferError) in try await visitor.perform(ending(end)) }
        }
        return status
    }

    // MARK: Drop boxes

    /// Files posted to a drop box, each under its own name in the shared folder, never over
    /// anything (the `share` front end's default keeps both: a name taken gets ` (2)`);
    /// nothing is listed back but what this request sent. Each file is an upload of the
    /// visitor's session, audited once as it lands.
    private func receive(_ exchange: HTTPExchange, _ share: Share, visitor session: Session, language: Language) -> Int {
        guard let folder = share.virtualPath,
              let type = exchange.contentType,
              let boundary = MultipartReader.boundary(in: type)
        else { return sharePage(exchange, 400, ShareText.paragraph("A multipart form with files is expected.")) }
        var received: [String] = []
        var failure: CofferError?
        let parts = MultipartBody(exchange, boundary: boundary)
        // Each file crosses to the session three times (begin, its bytes as they arrive,
        // commit), whatever its size.
        reading: while failure == nil, let event = parts.next() {
            guard case .file(let name) = event else {
                if event == .end { break reading }
                continue  // a field's bytes, or a file's whose name was refused
            }
            guard let name, let target = try? folder.appending(MultipartReader.lastComponent(of: name)) else { continue }
            let id: String
            switch web.blocking(in: session, { () async throws(CofferError) in try await session.perform(BeginUpload(target)) }) {
            case .success(let begun): id = begun
            case .failure(let error):
                failure = error
                break reading
            }
            let bytes = parts.currentFile
            let appended = web.blocking(in: session) { () async throws(CofferError) in
                try await session.perform(AppendUploadStream(id, offset: 0, body: bytes, destination: target, auditsThisBody: false))
            }
            if case .failure(let error) = appended { failure = error }
            // A file cut off (the body ended before its part did) is dropped, never placed short.
            guard failure == nil, parts.fileIsWhole else {
                _ = web.blocking(in: session) { () async throws(CofferError) in try await session.perform(AbortUpload(id)) }
                if failure == nil {
                    failure = CofferError(.ioError, detail: parts.cutOff ? "the upload was cut off" : "the form ended inside a file")
                }
                break reading
            }
            switch web.blocking(in: session, { () async throws(CofferError) in try await session.perform(CommitUpload(id)) }) {
            case .success(let node): received.append(node.name)
            case .failure(let error): failure = error
            }
        }
        if let failure {
            return sharePage(exchange, 400, ShareText.paragraph(failure.userMessage(in: language).text)
                             + dropBox(share, language, received: received))
        }
        return sharePage(exchange, 200, dropBox(share, language, received: received))
    }

    // MARK: Pages

    private func sharePage(_ exchange: HTTPExchange, _ status: Int, _ body: String, headers: String = "") -> Int {
        exchange.answer(status, Array(ShareText.document(body).utf8), type: "text/html; charset=utf-8",
                        headers: WebContext.sharePolicy + headers)
    }

    private func gone(_ language: Language) -> String {
        ShareText.paragraph(LocalizedText("There is nothing at this link: it may have been revoked, or mistyped.",
                                          "此链接下没有内容：它可能已被撤销，或地址有误。")(language))
    }

    private func ended(_ language: Language) -> String {
        ShareText.paragraph(LocalizedText("This link has ended: it expired, or its downloads were used up.",
                                          "此链接已结束：已过期，或下载次数已用完。")(language))
    }

    private func passwordForm(_ share: Share, _ language: Language, wrong: Bool) -> String {
        let wrongText = wrong ? ShareText.paragraph(LocalizedText("That password is not the right one.", "密码不正确。")(language)) : ""
        return ShareText.heading(LocalizedText("This link asks for a password", "此链接需要密码")(language)) + wrongText
            + "<form method=\"post\" action=\"/s/\(share.id)\"><label>\(LocalizedText("Password", "密码")(language)) "
            + "<input type=\"password\" name=\"password\" autofocus required></label> "
            + "<button type=\"submit\">\(LocalizedText("Open", "打开")(language))</button></form>"
    }

    private func dropBox(_ share: Share, _ language: Language, received: [String]) -> String {
        var html = ShareText.heading(LocalizedText("Send files", "发送文件")(language))
            + ShareText.paragraph(LocalizedText("Files sent here are kept for the person who shared this link; nothing is replaced, and what others sent is not shown.",
                                                "发送到这里的文件会交给共享此链接的人；不会替换任何文件，也不会显示其他人发送的内容。")(language))
        if !received.isEmpty {
            html += ShareText.paragraph(LocalizedText("Received:", "已收到：")(language)) + "<ul>"
                + received.map { "<li>" + ShareText.escape($0) + "</li>" }.joined() + "</ul>"
        }
        return html + "<form method=\"post\" action=\"/s/\(share.id)\" enctype=\"multipart/form-data\">"
            + "<input type=\"file\" name=\"files\" multiple required> "
            + "<button type=\"submit\">\(LocalizedText("Send", "发送")(language))</button></form>"
    }

    private func itemPage(_ share: Share, _ node: FileNode, _ names: [String], visitor session: Session,
                          _ language: Language) -> String {
        let below = names.map { $0.addingPercentEncoding(withAllowedCharacters: ShareText.nameCharacters) ?? "" }
        let suffix = below.isEmpty ? "" : "/" + below.joined(separator: "/")
        let known = web.service.registry.type(withIdentifier: node.typeIdentifier)
        let typeName = (language == .simplifiedChinese ? known?.chineseName : known?.englishName) ?? node.typeIdentifier
        if node.kind == .file {
            var html = ShareText.heading(node.name)
                + "<p>\(SizeText.decimal(node.size)) · \(ShareText.escape(typeName))</p>"
            if Previewer.offersThumbnail(node, registry: web.service.registry) {
                html += "<p><img src=\"/s/\(share.id)/thumb\(suffix)\" alt=\"\"></p>"
            }
            return html + "<p><a href=\"/s/\(share.id)/raw\(suffix)\" download>\(LocalizedText("Download", "下载")(language))</a></p>"
        }
        let path = node.path
        let items = (try? web.blocking(in: session) { () async throws(CofferError) in try await session.perform(ListFolder(path)) }.get().items) ?? []
        var html = ShareText.heading(names.last ?? node.name)
            + "<p><a href=\"/s/\(share.id)/zip\(suffix)\" download>\(LocalizedText("Download all as .zip", "全部下载为 .zip")(language))</a></p><ul>"
        if !names.isEmpty {
            let up = below.dropLast().joined(separator: "/")
            html += "<li><a href=\"/s/\(share.id)/p\(up.isEmpty ? "" : "/" + up)\">..</a></li>"
        }
        for item in items where !item.isHidden && item.special == nil && item.linkTarget == nil {
            let link = "/s/\(share.id)/p\(suffix)/" + (item.name.addingPercentEncoding(withAllowedCharacters: ShareText.nameCharacters) ?? "")
            let size = item.kind == .file ? " · " + SizeText.decimal(item.size) : "/"
            html += "<li><a href=\"\(link)\">\(ShareText.escape(item.name))</a>\(size)</li>"
        }
        return html + "</ul>"
    }
}

/// The pieces of the share pages: escaped text in a small document of their own. Its
/// ``escape(_:)`` is the server's one escape of text for HTML (the `--open` redirect page's too).
enum ShareText {
    /// Characters a name keeps in a link (anything else is percent-encoded, `/` included).
    static let nameCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static func heading(_ text: String) -> String { "<h1>" + escape(text) + "</h1>" }
    static func paragraph(_ text: String) -> String { "<p>" + escape(text) + "</p>" }

    static func document(_ body: String) -> String {
        "<!doctype html><html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"
            + "<title>Coffer</title><style>body{font:16px system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}"
            + "img{max-width:100%}li{margin:.3rem 0}@media(prefers-color-scheme:dark){body{background:#1e1e1e;color:#ddd}a{color:#8ab4f8}}</style>"
            + "</head><body>" + body + "</body></html>"
    }
}
