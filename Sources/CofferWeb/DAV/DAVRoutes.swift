import CofferCore
import CofferHTTPServer
import CofferRuntime
import FileService
import Foundation
import Synchronization

/// WebDAV at `/dav/` (RFC 4918, classes 1 and 2): each visible mount is a collection (`/dav/files/`),
/// and every request is an operation of one long-lived session whose front end is `dav`,
/// audited and journaled as every other front end's. Coffer's meaning holds under WebDAV's
/// methods: `DELETE` moves to the trash, a `PUT`, `COPY` or `MOVE` over a file keeps what it
/// replaces as a version, `Overwrite: F` fails as Coffer's `fail` does.
///
/// Clients show the server's token as the password of HTTP Basic (any user name) or as
/// `Authorization: Bearer`.
final class DAVRoutes: Sendable {
    let web: WebContext
    let access: PageAccess
    let files: FileRoutes
    /// The session every WebDAV request is an operation of.
    let session: Session
    /// The clients' locks, kept across restarts of the server.
    let locks: DAVLocks
    /// Finder's `.DS_Store` and `._` files, kept apart from the user's.
    let apple: DAVAppleFiles
    /// What was said on standard error already (``reportOnce(_:)``).
    private let reported = Mutex<Set<String>>([])
    /// The most a `PROPFIND` or `PROPPATCH` body may hold.
    static let bodyLimit = 1 << 20
    /// How many members of a folder a `PROPFIND` reads at a time.
    static let listingBatch = 1000
    /// (`COPY` and `MOVE` reach this as `PATCH`, the method in a header only the server's front
    /// can set: Debian's CivetWeb 1.15 refuses both with its own `400`.)
    static let allowed = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK"

    init(web: WebContext, access: PageAccess, files: FileRoutes) throws(CofferError) {
        self.web = web
        self.access = access
        self.files = files
        locks = DAVLocks(file: web.configuration.davLocksPath)
        apple = DAVAppleFiles(root: web.configuration.davAppleFilesPath)
        session = try web.service.openSession(SessionOptions(frontEnd: "dav", language: web.configuration.language, isLongLived: true))
    }

    func answer(_ exchange: HTTPExchange) -> Int {
        guard access.isCurrent(shownPassword(exchange)) else {
            return reply(exchange, 401, text: "Coffer's WebDAV takes the token `coffer serve` printed as the password (any user name).",
                         headers: "WWW-Authenticate: Basic realm=\"Coffer\", charset=\"UTF-8\"\r\n")
        }
        let item: VirtualPath?
        do throws(DAVPath.Problem) {
            item = try DAVPath.item(exchange.rawPath)
        } catch {
            return reply(exchange, error == .elsewhere ? 404 : 400, text: "\(error)")
        }
        // `If` (RFC 4918, 10.4): conditions on locks and entity tags, and the lock tokens shown.
        var tokens: Set<String> = []
        if let text = exchange.header("If") {
            guard let condition = DAVIfHeader(text) else { return reply(exchange, 400, text: "The If header does not follow RFC 4918, 10.4.") }
            guard holds(condition, for: item) else { return reply(exchange, 412, text: "The conditions of the If header do not hold.") }
            tokens = condition.tokens
        }
        if let item, DAVAppleFiles.holds(item), let status = appleAnswer(exchange, item, tokens: tokens) { return status }
        switch exchange.method {
        case "OPTIONS":
            return reply(exchange, 200, text: "", headers: "DAV: 1, 2\r\nAllow: \(Self.allowed)\r\nMS-Author-Via: DAV\r\n")
        case "PROPFIND": return propfind(exchange, item)
        case "PROPPATCH": return proppatch(exchange, item, tokens: tokens)
        case "GET", "HEAD": return get(exchange, item)
        case "PUT": return put(exchange, item, tokens: tokens)
        case "DELETE": return delete(exchange, item, tokens: tokens)
        case "MKCOL": return mkcol(exchange, item, tokens: tokens)
        case "COPY", "MOVE": return copyOrMove(exchange, item, moving: exchange.method == "MOVE", tokens: tokens)
        case "LOCK": return lock(exchange, item, tokens: tokens)
        case "UNLOCK": return unlock(exchange, item)
        default:
            return reply(exchange, 405, text: "\(exchange.method) is not served here.", headers: "Allow: \(Self.allowed)\r\n")
        }
    }

    /// The password of `Authorization: Basic`, or the token of `Bearer`.
    private func shownPassword(_ exchange: HTTPExchange) -> String? {
        guard let header = exchange.header("Authorization") else { return nil }
        if header.lowercased().hasPrefix("basic "),
           let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
           let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") {
            return String(text[text.index(after: colon)...])
        }
        return access.shownToken(exchange, allowQuery: false)
    }

    // MARK: Reading

    private func propfind(_ exchange: HTTPExchange, _ item: VirtualPath?) -> Int {
        guard let depth = DAVHeaders.Depth(exchange.header("Depth"), default: .infinity) else {
            return reply(exchange, 400, text: "Depth is 0, 1 or infinity.")
        }
        guard depth != .infinity else {
            // RFC 4918, 9.1: a server may refuse; the whole tree is walked with Depth 1, folder by folder.
            return xml(exchange, 403, Array("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\"><D:propfind-finite-depth/></D:error>\n".utf8))
        }
        let request: PropertyRequest
        switch propertyRequest(exchange) {
        case .failure(let refused): return refused.status
        case .success(let read): request = read
        }
        let session = session
        // Dead properties are read only when asked for: a listing of live ones opens nothing.
        let wantsDead = switch request {
        case .all, .names: true
        case .some(let names): names.contains { $0.namespace != "DAV:" }
        }
        // Quotas (RFC 4331) only when named, and only for the item asked about: they cost a walk.
        let wantsQuota = if case .some(let names) = request { names.contains { DAVQuota.names.contains($0) } } else { false }
        // The folder's names are read first, then its members a batch at a time, each batch
        // written out before the next is read: a folder of any size is listed in bounded memory.
        let listed = web.blocking(in: session) { () async throws(CofferError) -> (FileNode?, FolderListing, UserAttributes, [(name: QualifiedName, value: String)]) in
            guard let item else { return (nil, FolderListing(entries: []), [:], []) }
            let node = try await session.perform(StatItem(item))
            let entries = depth == .one && node.kind != .file ? try await session.perform(ListFolderEntries(item)) : FolderListing(entries: [])
            // (Best effort: an item whose attributes cannot be read still lists.)
            let attributes = wantsDead ? ((try? await session.perform(ReadAttributes(item))) ?? [:]) : [:]
            let quota = wantsQuota && node.kind != .file ? await DAVQuota.properties(of: node.path, in: session) : []
            return (node, entries, attributes, quota)
        }
        let (top, listing, topAttributes, quota): (FileNode?, FolderListing, UserAttributes, [(name: QualifiedName, value: String)])
        switch listed {
        case .failure(let error): return failure(exchange, error)
        case .success(let found): (top, listing, topAttributes, quota) = found
        }
        let entries = listing.entries
        var answer = DAVMultistatus()
        // Names Windows cannot hold are listed as they are, and said in a warning Windows' client
        // carries to no one, so the server's own output says it too.
        var warnings = ""
        if let top, WindowsNames.isWindows(userAgent: exchange.header("User-Agent")) {
            let troubled = entries.compactMap { entry in
                WindowsNames.problem(entry.name).map { (top.path.appending(trustedName: entry.name), $0) }
            }
            for (path, problem) in troubled {
                let message = LocalizedText("Windows cannot show “\(path)”: \(problem). It is listed unchanged; rename it elsewhere to reach it from Windows.",
                                            "Windows 无法显示“\(path)”：\(problem)。它按原名列出；请在其他前端重命名后再从 Windows 访问。")(web.configuration.language)
                reportOnce(message)
                // The headers stay small (4 KiB at most); standard error has every one.
                let header = "Coffer-Warning: \(message.addingPercentEncoding(withAllowedCharacters: WebContext.plainASCII) ?? "")\r\n"
                if warnings.utf8.count + header.utf8.count <= 4096 { warnings += header }
            }
        }
        // Chunked, so the connection stays open for the client's next request.
        exchange.respond(207, headers: "Content-Type: application/xml; charset=utf-8\r\nCache-Control: no-store\r\n"
                         + "Transfer-Encoding: chunked\r\n" + warnings, length: nil)
        let body = exchange.chunked()
        func send(_ bytes: [UInt8]) -> Bool { bytes.isEmpty || bytes.withUnsafeBytes { body.write($0.baseAddress!, $0.count) } }
        if let top {
            add(top, request, attributes: topAttributes, extra: quota, to: &answer)
        } else {
            // `/dav/`: the mounts, as collections.
            let root = DAVProperties.rootCollection()
            answer.add(href: DAVPath.prefix, found: root.filter { request.wants($0.name) }, missing: request.missing(from: root),
                       namesOnly: request == .names)
            if depth == .one {
                for mount in web.service.mounts where mount.isVisible {
                    let node = FileNode(path: .root(of: mount.name), kind: .folder, size: 0, modificationDate: .distantPast,
                                        typeIdentifier: FileType.Identifier.folder)
                    add(node, request, attributes: [:], to: &answer)
                }
            }
        }
        if let top, !entries.isEmpty {
            // Members' addresses are their folder's and their name: the folder's is written once.
            let folderHref = DAVPath.href(top.path, isCollection: true)
            for start in stride(from: 0, to: entries.count, by: Self.listingBatch) {
                let batch = start..<min(entries.count, start + Self.listingBatch)
                let paths = entries[batch].map { top.path.appending(trustedName: $0.name) }
                let known = listing.nodes.map { Array($0[batch]) as [FileNode?] }
                let read = web.blocking(in: session) { () async throws(CofferError) -> ([FileNode?], [VirtualPath: UserAttributes]) in
                    let nodes = if let known { known } else { try await session.perform(StatItems(paths)) }
                    let attributes = wantsDead ? ((try? await session.perform(ReadAttributesOfItems(paths))) ?? [:]) : [:]
                    return (nodes, attributes)
                }
                // (The status is sent already: members that cannot be read now are answered each with its own.)
                guard case .success(let (nodes, attributes)) = read else {
                    let status = if case .failure(let error) = read { HTTPRules.status(for: error.kind) } else { 500 }
                    for entry in entries[batch] {
                        answer.add(href: folderHref + TrashInfo.percentEncoded(entry.name) + (entry.kind == .folder ? "/" : ""), status: status)
                    }
                    continue
                }
                for case let member? in nodes {
                    let href = folderHref + TrashInfo.percentEncoded(member.name) + (member.kind != .file ? "/" : "")
                    add(member, request, attributes: attributes[member.path] ?? [:], href: href, to: &answer)
                    // A piece at a time: a folder of any size goes out without being held whole.
                    if answer.pendingBytes >= 64 << 10, !send(answer.take()) { return 207 }
                }
            }
        }
        // Finder is shown what it wrote beside the files (``DAVAppleFiles``); no one else is.
        if let top, top.kind != .file, depth == .one, DAVAppleFiles.isFinder(userAgent: exchange.header("User-Agent")) {
            let listed = Set(entries.map(\.name))
            for kept in apple.members(of: top.path) where !listed.contains(kept.name) {
                add(kept, request, attributes: [:], to: &answer)
            }
        }
        if send(answer.finish()) { body.end() }
        return 207
    }

    /// A refusal already answered, with the status it sent.
    struct Answered: Error { let status: Int }

    /// A `PROPFIND` body, read within ``bodyLimit``; a body that cannot be read is answered here.
    func propertyRequest(_ exchange: HTTPExchange) -> Result<PropertyRequest, Answered> {
        switch exchange.readBody(limit: Self.bodyLimit) {
        case .failure: return .failure(Answered(status: reply(exchange, 413, text: "A PROPFIND body is at most \(Self.bodyLimit) bytes.")))
        case .success(let body):
            do throws(DAVXML.Refusal) { return .success(try PropertyRequest(body: body)) } catch {
                return .failure(Answered(status: reply(exchange, error == .unavailable ? 500 : 400, text: "The PROPFIND body: \(error)")))
            }
        }
    }

    func add(_ node: FileNode, _ request: PropertyRequest, attributes: UserAttributes, href: String? = nil,
                     extra: [(name: QualifiedName, value: String)] = [], to answer: inout DAVMultistatus) {
        let properties = DAVProperties.live(of: node, registry: web.service.registry)
            + [(.dav("supportedlock"), DAVLocks.supported), (.dav("lockdiscovery"), locks.covering(node.path).map(DAVLocks.activeLock).joined())]
            + DAVDeadProperties.properties(in: attributes)
            + (DAVSyncClients.property(of: node, attributes: attributes).map { [(DAVSyncClients.checksumsProperty, $0)] } ?? [])
            + extra
        answer.add(href: href ?? DAVPath.href(node.path, isCollection: node.kind != .file),
                   found: properties.filter { request.wants($0.name) }, missing: request.missing(from: properties),
                   namesOnly: request == .names)
    }

    // MARK: Properties

    /// `PROPPATCH` (RFC 4918, 9.2): every instruction is carried out, in document order, or
    /// none is. A property of `DAV:` is Coffer's to say (403, the others 424); dead ones are
    /// the item's extended attributes; Coffer's `tags` are its tags.
    private func proppatch(_ exchange: HTTPExchange, _ item: VirtualPath?, tokens: Set<String>) -> Int {
        guard let item else { return reply(exchange, 403, text: "/dav/, the collection of mounts, has no properties to change.") }
        if let status = locked(exchange, item, tokens: tokens) { return status }
        let instructions: [PropertyInstruction]
        switch exchange.readBody(limit: Self.bodyLimit) {
        case .failure: return reply(exchange, 413, text: "A PROPPATCH body is at most \(Self.bodyLimit) bytes.")
        case .success(let body):
            do throws(DAVXML.Refusal) { instructions = try PropertyInstruction.parse(body) } catch {
                return reply(exchange, error == .unavailable ? 500 : 400, text: "The PROPPATCH body: \(error)")
            }
        }
        var names: [QualifiedName] = []
        var seen: Set<QualifiedName> = []
        var attributeNames: [String: QualifiedName] = [:]
        var refused: Set<QualifiedName> = []
        for instruction in instructions where seen.insert(instruction.name).inserted {
            names.append(instruction.name)
            if instruction.name == DAVDeadProperties.tags { continue }
            if !DAVDeadProperties.isProtected(instruction.name), let attribute = DAVDeadProperties.attribute(for: instruction.name) {
                attributeNames[attribute] = instruction.name
            } else {
                refused.insert(instruction.name)
            }
        }
        let session = session
        let href = DAVPath.href(item, isCollection: false)
        func statuses(_ status: (QualifiedName) -> Int) -> Int {
            var answer = DAVMultistatus()
            answer.add(href: href, statuses: names.map { ($0, status($0)) })
            return xml(exchange, 207, answer.finish())
        }
        if !refused.isEmpty {
            if case .failure(let error) = stat(item) {
                return failure(exchange, error)
            }
            return statuses { refused.contains($0) ? 403 : 424 }
        }
        // What the item has after, in document order: a later instruction wins.
        var setting: UserAttributes = [:], removing: Set<String> = [], tags: [String]?
        for instruction in instructions {
            switch instruction {
            case .set(let name, let element) where name == DAVDeadProperties.tags: tags = DAVDeadProperties.tags(in: element)
            case .remove(let name) where name == DAVDeadProperties.tags: tags = []
            case .set(let name, let element):
                let attribute = DAVDeadProperties.attribute(for: name)!
                setting[attribute] = DAVDeadProperties.value(of: element)
                removing.remove(attribute)
            case .remove(let name):
                let attribute = DAVDeadProperties.attribute(for: name)!
                setting[attribute] = nil
                removing.insert(attribute)
            }
        }
        let changed = web.blocking(in: session) { [setting, removing, tags] () async throws(CofferError) -> [LostAttribute] in
            _ = try await session.perform(StatItem(item))
            for tag in tags ?? [] { try FileTags.check(tag) }
            let lost = setting.isEmpty && removing.isEmpty
                ? [] : try await session.perform(ChangeAttributes(item, setting: setting, removing: removing.sorted()))
            if let tags, lost.isEmpty {
                let before = try await session.perform(ReadTags(item))
                let outcome = try await session.perform(TagItems([item], adding: tags.filter { !before.contains($0) },
                                                                 removing: before.filter { !tags.contains($0) }))
                _ = try outcome[0].tags.get()
            }
            return lost
        }
        switch changed {
        case .failure(let error) where error.kind == .noSuchFile: return failure(exchange, error)
        case .failure(let error):
            let status = error.kind == .readOnly || error.kind == .unsupported ? 403 : HTTPRules.status(for: error.kind)
            return statuses { _ in status }
        case .success(let lost):
            // Those with no room left (RFC 4918, 9.2.1: 507); nothing was changed, so the others fail too (424).
            let full = Set(lost.compactMap { attributeNames[$0.name] })
            return statuses { full.isEmpty ? 200 : full.contains($0) ? 507 : 424 }
        }
    }

    private func get(_ exchange: HTTPExchange, _ item: VirtualPath?) -> Int {
        guard let item else { return reply(exchange, 405, text: "/dav/ is the collection of mounts: list it with PROPFIND.") }
        let node: FileNode
        switch stat(item) {
        case .failure(let error): return failure(exchange, error)
        case .success(let found): node = found
        }
        guard node.kind == .file else { return reply(exchange, 405, text: "A folder: list it with PROPFIND.") }
        let headers = (DAVProperties.etag(of: node).map { "ETag: \($0)\r\n" } ?? "")
            + "Last-Modified: \(DAVProperties.httpDate(node.modificationDate))\r\n"
        return files.sendFile(exchange, at: item, attachment: true, in: session, headers: headers).status
    }

    // MARK: Changing

    private func put(_ exchange: HTTPExchange, _ item: VirtualPath?, tokens: Set<String>) -> Int {
        guard let item, !item.isRoot else { return reply(exchange, 405, text: "A mount is a collection: PUT a file in it.") }
        let session = session
        let (target, existed) = existing(item)
        if existed?.kind == .folder { return reply(exchange, 405, text: "A folder is there: PUT cannot replace it.") }
        if let status = locked(exchange, target, creating: existed == nil, tokens: tokens) { return status }
        // A conditional save (RFC 9110, 13.1): `If-Match` names the version the client read,
        // `If-None-Match: *` a file that must be new. Checked now and again as the file is placed.
        var expected: FileVersion?
        var mustBeNew = false
        if let match = exchange.header("If-Match")?.trimmingCharacters(in: .whitespaces) {
            let current = existed.flatMap(DAVProperties.etag(of:))
            let named = match.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard existed != nil, match == "*" || named.contains(where: { $0 == current }) else {
                return reply(exchange, 412, text: "The file is not at the version If-Match names (it changed, or is gone).")
            }
            expected = match == "*" ? nil : existed?.version
        }
        if exchange.header("If-None-Match")?.trimmingCharacters(in: .whitespaces) == "*" {
            guard existed == nil else { return reply(exchange, 412, text: "Something is there, and If-None-Match: * asks for a new file.") }
            mustBeNew = true
        }
        let size = exchange.header("Content-Length").flatMap { Int64($0) }
        let plain = RequestBody(exchange)
        // Every body's SHA-1 is kept (with SHA instructions it costs little), its MD5 (three times
        // the work) only when the client sends one to be checked.
        let claimed = DAVSyncClients.checksums(exchange.header("OC-Checksum"))
        let hashing = HashingBody(plain, withMD5: claimed[.md5] != nil)
        let body: any IncomingBytes = hashing ?? plain
        let mtime = DAVSyncClients.modificationDate(exchange.header("X-OC-Mtime"))
        let written = web.blocking(in: session) { [expected, mustBeNew] () async throws(CofferError) -> (FileNode, Bool) in
            let upload = try await session.perform(BeginUpload(target, conflict: .policy(mustBeNew ? .fail : .replace), size: size))
            var node: FileNode
            let digests: [StreamingDigest.Algorithm: String]
            do throws(CofferError) {
                let received = try await session.perform(AppendUploadStream(upload, offset: 0, body: body, destination: target))
                if let size, received != size {
                    throw CofferError(.ioError, path: target, detail: "the body ended after \(received) of \(size) bytes")
                }
                // A checksum the client sent must be what arrived, before anything is placed.
                digests = hashing?.finish() ?? [:]
                for (algorithm, value) in claimed where digests[algorithm] != nil && digests[algorithm] != value {
                    throw CofferError(.invalidArgument, path: target, detail: "OC-Checksum: the body's \(algorithm.name) is \(digests[algorithm]!)")
                }
                node = try await session.perform(CommitUpload(upload, ifVersion: expected))
            } catch {
                _ = try? await session.perform(AbortUpload(upload))
                throw error
            }
            // After the file is in place: its time as the client gives it, and its checksums
            // kept for `oc:checksums` (where the storage can; a mount that cannot still has the file).
            var timeKept = false
            if let mtime, let touched = try? await session.perform(TouchItem(target, to: mtime)) { (node, timeKept) = (touched, true) }
            if !digests.isEmpty,
               (try? await session.perform(ChangeAttributes(target, setting: [DAVSyncClients.attribute: DAVSyncClients.stored(digests, for: node)]))) != nil {
                node = (try? await session.perform(StatItem(target))) ?? node
            }
            return (node, timeKept)
        }
        switch written {
        case .failure(let error) where error.kind == .changedSinceRead || (mustBeNew && error.kind == .fileExists):
            return reply(exchange, 412, text: "The file changed while it was sent: nothing was written.")
        case .failure(let error) where error.kind == .invalidArgument && error.detail?.hasPrefix("OC-Checksum") == true:
            return reply(exchange, 400, text: "\(error.detail!): nothing was written.")
        case .failure(let error): return failure(exchange, error, missingParentIsConflict: true)
        case .success(let (node, timeKept)):
            let etag = DAVProperties.etag(of: node).map { "ETag: \($0)\r\n" } ?? ""
            return reply(exchange, existed == nil ? 201 : 204, text: "", headers: etag + (timeKept ? "X-OC-MTime: accepted\r\n" : ""))
        }
    }

    private func delete(_ exchange: HTTPExchange, _ item: VirtualPath?, tokens: Set<String>) -> Int {
        guard let item, !item.isRoot else { return reply(exchange, 403, text: "A mount cannot be deleted.") }
        if let status = locked(exchange, item, members: true, creating: true, tokens: tokens) { return status }
        let trashed = web.blocking(in: session) { [session] () async throws(CofferError) in
            try await session.perform(TrashItems([item]))[0].get()
        }
        if case .failure(let error) = trashed { return failure(exchange, error) }
        locks.forget(within: item)
        apple.follow(item, to: nil)
        return reply(exchange, 204, text: "")
    }

    private func mkcol(_ exchange: HTTPExchange, _ item: VirtualPath?, tokens: Set<String>) -> Int {
        guard let item, !item.isRoot else { return reply(exchange, 405, text: "Mounts are made by `coffer`'s options, not by MKCOL.") }
        if let status = locked(exchange, item, creating: true, tokens: tokens) { return status }
        switch exchange.readBody(limit: Self.bodyLimit) {
        case .success(let body) where body.isEmpty: break
        default: return reply(exchange, 415, text: "MKCOL takes no body.")
        }
        let made = web.blocking(in: session) { [session] () async throws(CofferError) in
            // (Taken under the name as sent, or as composed: either way it is there.)
            if (try? await session.perform(StatItem(item))) != nil { throw CofferError(.fileExists, path: item) }
            return try await session.perform(CreateFolder(DAVPath.composed(item)))
        }
        switch made {
        case .failure(let error) where error.kind == .fileExists: return reply(exchange, 405, text: "Something is already there.")
        case .failure(let error): return failure(exchange, error, missingParentIsConflict: true)
        case .success: return reply(exchange, 201, text: "")
        }
    }

    private func copyOrMove(_ exchange: HTTPExchange, _ item: VirtualPath?, moving: Bool, tokens: Set<String>) -> Int {
        guard let source = item, !source.isRoot else { return reply(exchange, 403, text: "A mount cannot be copied or moved.") }
        let target: VirtualPath
        do throws(DAVPath.Problem) {
            guard let named = try DAVPath.destination(exchange.header("Destination"), isServed: destinationIsServed(exchange)) else {
                return reply(exchange, 403, text: "The Destination is the collection of mounts.")
            }
            target = named
        } catch {
            return reply(exchange, error == .elsewhere ? 502 : 400, text: "Destination: \(error)")
        }
        guard let overwrite = DAVHeaders.overwrite(exchange.header("Overwrite")) else {
            return reply(exchange, 400, text: "Overwrite is T or F.")
        }
        guard let depth = DAVHeaders.Depth(exchange.header("Depth"), default: .infinity), depth != .one,
              !(moving && depth != .infinity) else {
            return reply(exchange, 400, text: moving ? "A MOVE takes Depth: infinity." : "A COPY takes Depth: 0 or infinity.")
        }
        if target == source || source.contains(target) {
            return reply(exchange, 403, text: "The Destination is the item itself, or inside it.")
        }
        if DAVAppleFiles.holds(target) {
            return reply(exchange, 403, text: "\(target.name) is a name Finder keeps apart from your files: choose another.")
        }
        let session = session
        // A missing source is 404; a missing folder at the Destination, 409 (below).
        if case .failure(let error) = stat(source) {
            return failure(exchange, error)
        }
        // A lock on what is moved away or replaced, or on the folder that gains or loses it, needs its token.
        let targetExists = (try? stat(target).get()) != nil
        if moving, let status = locked(exchange, source, members: true, creating: true, tokens: tokens) { return status }
        if let status = locked(exchange, target, members: true, creating: !targetExists, tokens: tokens) { return status }
        let outcome = web.blocking(in: session) { () async throws(CofferError) -> Bool in
            let existed = (try? await session.perform(StatItem(target))) != nil
            if existed && !overwrite { throw CofferError(.fileExists, path: target) }
            let conflict: ConflictChoice = overwrite ? .policy(.replaceFolder) : .policy(.fail)
            let node = try await session.perform(StatItem(source))
            if !moving && depth == .zero && node.kind != .file {
                // Depth 0: the collection and its properties, without its members.
                if existed { _ = try await session.perform(TrashItems([target]))[0].get() }
                _ = try await session.perform(CreateFolder(target))
            } else if moving {
                _ = try await session.perform(MoveItem(source, to: .exactly(target), conflict: conflict))
            } else {
                _ = try await session.perform(CopyItem(source, to: .exactly(target), conflict: conflict))
            }
            return existed
        }
        switch outcome {
        case .failure(let error) where error.kind == .fileExists:
            return reply(exchange, 412, text: "Something is at the Destination and Overwrite is F.")
        case .failure(let error): return failure(exchange, error, missingParentIsConflict: true)
        case .success(let existed):
            // Locks do not follow an item, and what was replaced at the Destination was deleted first (9.9.4).
            if moving { locks.forget(within: source) }
            if existed { locks.forget(within: target) }
            // Finder's files inside a folder go where it went (``DAVAppleFiles``).
            if existed { apple.follow(target, to: nil) }
            if moving || depth != .zero { apple.follow(source, to: target, copying: !moving) }
            return reply(exchange, existed ? 204 : 201, text: "")
        }
    }

    /// Writes `message` to the server's standard error the first time it comes up.
    private func reportOnce(_ message: String) {
        guard reported.withLock({ $0.count < 10_000 && $0.insert(message).inserted }) else { return }
        FileHandle.standardError.write(Data("coffer serve: WebDAV: \(message)\n".utf8))
    }

    // MARK: Items

    /// The item at `path`, read in the session.
    func stat(_ path: VirtualPath) -> Result<FileNode, CofferError> {
        let session = session
        return web.blocking(in: session) { () async throws(CofferError) in try await session.perform(StatItem(path)) }
    }

    /// Whether a `Destination`'s host and port are this server's: a name it is served under, or
    /// the one the request itself was sent to (beyond loopback, whatever name reached the machine).
    func destinationIsServed(_ exchange: HTTPExchange) -> @Sendable (String) -> Bool {
        let served = access.served, host = exchange.header("Host")?.lowercased()
        return { authority in served.isNamed(by: authority) || authority == host }
    }

    /// Where a request's item is: under the name as sent when something is there, else under
    /// the name composed (NFC), where a new item is made (macOS sends names decomposed).
    func existing(_ item: VirtualPath) -> (target: VirtualPath, node: FileNode?) {
        if case .success(let node) = stat(item) { return (item, node) }
        let composed = DAVPath.composed(item)
        return (composed, try? stat(composed).get())
    }

    // MARK: Answers

    func reply(_ exchange: HTTPExchange, _ status: Int, text: String, headers: String = "") -> Int {
        exchange.answer(status, Array(text.utf8), type: "text/plain; charset=utf-8", headers: headers + "Cache-Control: no-store\r\n")
    }

    func xml(_ exchange: HTTPExchange, _ status: Int, _ body: [UInt8]) -> Int {
        exchange.answer(status, body, type: "application/xml; charset=utf-8", headers: "Cache-Control: no-store\r\n")
    }

    /// An operation's failure as WebDAV says it: a folder on the way missing is `409
    /// Conflict` where the item is to be made (RFC 4918, 9.3.1, 9.7.1, 9.8.5).
    func failure(_ exchange: HTTPExchange, _ error: CofferError, missingParentIsConflict: Bool = false) -> Int {
        var status = HTTPRules.status(for: error.kind)
        if missingParentIsConflict && (error.kind == .noSuchFile || error.kind == .notADirectory) { status = 409 }
        if error.kind == .readOnly { status = 403 }
        return reply(exchange, status, text: error.userMessage(in: web.configuration.language).description,
                     headers: "X-Coffer-Error: \(error.kind.identifier)\r\n")
    }
}
