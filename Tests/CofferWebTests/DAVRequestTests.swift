@testable import CofferWeb
import CofferCore
import CofferRuntime
import Foundation
import Testing

/// WebDAV's requests as RFC 4918 writes them, and as hostile clients write them: bodies read
/// with libxml2 within bounds, headers, and the URLs that name items.
@Suite struct DAVRequestTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func propfindBodies() throws {
        #expect(try PropertyRequest(body: []) == .all(including: []))
        #expect(try PropertyRequest(body: bytes(" \r\n")) == .all(including: []))
        let some = try PropertyRequest(body: bytes("""
            <?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="http://ns.example.com/z/">
            <D:prop><D:getetag/><Z:color/><displayname xmlns="DAV:"/></D:prop></D:propfind>
            """))
        #expect(some == .some([.dav("getetag"), QualifiedName("http://ns.example.com/z/", "color"), .dav("displayname")]))
        #expect(try PropertyRequest(body: bytes("<propfind xmlns='DAV:'><propname/></propfind>")) == .names)
        #expect(try PropertyRequest(body: bytes("<propfind xmlns='DAV:'><allprop/><include><lockdiscovery/></include></propfind>"))
                == .all(including: [.dav("lockdiscovery")]))
        // Not DAV's propfind (no namespace), not XML, nothing asked.
        #expect(throws: DAVXML.Refusal.self) { try PropertyRequest(body: bytes("<propfind><allprop/></propfind>")) }
        #expect(throws: DAVXML.Refusal.malformed) { try PropertyRequest(body: bytes("<D:propfind xmlns:D='DAV:'><D:prop>")) }
        #expect(throws: DAVXML.Refusal.self) { try PropertyRequest(body: bytes("<propfind xmlns='DAV:'/>")) }
    }

    @Test func hostileBodiesAreRefusedWithinBounds() throws {
        // 10,000 levels deep: refused at 64.
        let deep = String(repeating: "<a>", count: 10_000) + String(repeating: "</a>", count: 10_000)
        #expect(throws: DAVXML.Refusal.malformed) { try DAVXML.parse(bytes(deep)) }
        // More elements than any request names.
        let wide = "<r>" + String(repeating: "<a/>", count: DAVXML.elementLimit + 1) + "</r>"
        #expect(throws: DAVXML.Refusal.malformed) { try DAVXML.parse(bytes(wide)) }
        // A billion laughs: entities are never expanded into the document.
        var laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        laughs += "<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"
        for level in 2...9 { laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">" }
        laughs += "]><propfind xmlns=\"DAV:\"><prop><x>&lol9;</x></prop></propfind>"
        let started = ContinuousClock.now
        if let read = try? DAVXML.parse(bytes(laughs)) {
            #expect(read.child(.dav("prop"))?.child(.dav("x"))?.text.count ?? 0 < 1_000)
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        // An external entity is not read.
        let external = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>"
        if let read = try? DAVXML.parse(bytes(external)) { #expect(!read.text.contains("root:")) }
    }

    @Test func proppatchBodiesKeepTheirOrder() throws {
        let instructions = try PropertyInstruction.parse(bytes("""
            <D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://ns.example.com/z/">
            <D:set><D:prop><Z:Author>Jim &amp; Roy</Z:Author></D:prop></D:set>
            <D:remove><D:prop><Z:Copyright-Owner/></D:prop></D:remove>
            <D:set><D:prop><Z:rich><Z:b>bold</Z:b></Z:rich></D:prop></D:set>
            </D:propertyupdate>
            """))
        #expect(instructions.map(\.name.name) == ["Author", "Copyright-Owner", "rich"])
        guard case .set(_, let author) = instructions[0], case .remove = instructions[1], case .set(_, let rich) = instructions[2] else {
            Issue.record("\(instructions)")
            return
        }
        #expect(author.text == "Jim & Roy")
        #expect(author.serialized.contains("Jim &amp; Roy"))
        // A value with elements is kept as XML that reads back the same.
        #expect(try DAVXML.parse(bytes(rich.serialized)) == rich)
        #expect(throws: DAVXML.Refusal.self) { try PropertyInstruction.parse(bytes("<propertyupdate xmlns='DAV:'/>")) }
    }

    @Test func lockBodies() throws {
        let exclusive = try LockRequest(body: bytes("""
            <D:lockinfo xmlns:D='DAV:'><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>
            <D:owner><D:href>http://example.org/~ejw/contact.html</D:href></D:owner></D:lockinfo>
            """))
        #expect(exclusive.exclusive && exclusive.owner?.child(.dav("href"))?.text == "http://example.org/~ejw/contact.html")
        let shared = try LockRequest(body: bytes("<lockinfo xmlns='DAV:'><lockscope><shared/></lockscope><locktype><write/></locktype></lockinfo>"))
        #expect(!shared.exclusive && shared.owner == nil)
        #expect(throws: DAVXML.Refusal.self) {
            try LockRequest(body: bytes("<lockinfo xmlns='DAV:'><lockscope><exclusive/></lockscope></lockinfo>"))
        }
    }

    @Test func headers() {
        #expect(DAVHeaders.Depth(nil, default: .infinity) == .infinity)
        #expect(DAVHeaders.Depth(" 1", default: .zero) == .one)
        #expect(DAVHeaders.Depth("Infinity", default: .zero) == .infinity)
        #expect(DAVHeaders.Depth("2", default: .zero) == nil)
        #expect(DAVHeaders.overwrite(nil) == true && DAVHeaders.overwrite("F") == false && DAVHeaders.overwrite("x") == nil)
        #expect(DAVHeaders.timeout(nil, default: 600, maximum: 3600) == 600)
        #expect(DAVHeaders.timeout("Infinite, Second-4100000000", default: 600, maximum: 3600) == 3600)
        #expect(DAVHeaders.timeout("Second-120", default: 600, maximum: 3600) == 120)
        #expect(DAVHeaders.timeout("Second-x, Second-30", default: 600, maximum: 3600) == 30)
    }

    @Test func urlsNameItemsAndNothingElse() throws {
        #expect(try DAVPath.item("/dav/") == nil)
        #expect(try DAVPath.item("/dav/files/") == .root(of: "files"))
        #expect(try DAVPath.item("/dav/files/Notes/a%20b%E7%AC%94.md")
                == VirtualPath(mount: "files", trustedComponents: ["Notes", "a b笔.md"]))
        // Names as sent (an existing NFD name is found); a new one is made composed, as macOS sends NFD.
        let decomposed = try #require(try DAVPath.item("/dav/files/Docs/cafe%CC%81"))
        #expect(decomposed == VirtualPath(mount: "files", trustedComponents: ["Docs", "cafe\u{301}"]))
        #expect(Array(DAVPath.composed(decomposed).name.utf8) == Array("caf\u{E9}".utf8))
        #expect(DAVPath.composed(decomposed).parent == VirtualPath(mount: "files", trustedComponents: ["Docs"]))
        #expect(throws: DAVPath.Problem.elsewhere) { try DAVPath.item("/content") }
        for refused in ["/dav/files/../etc", "/dav/files/a/%2e%2e/b", "/dav/files/a%2Fb", "/dav/files/a%00", "/dav/files/%ZZ",
                        "/dav/no such mount/x"] {
            #expect(throws: DAVPath.Problem.self, "\(refused)") { try DAVPath.item(refused) }
        }
        let served = { (authority: String) in ["127.0.0.1:8790", "localhost:8790"].contains(authority) }
        #expect(try DAVPath.destination("http://127.0.0.1:8790/dav/files/b.txt", isServed: served)
                == VirtualPath(mount: "files", trustedComponents: ["b.txt"]))
        #expect(try DAVPath.destination("/dav/files/b%20c.txt", isServed: served)
                == VirtualPath(mount: "files", trustedComponents: ["b c.txt"]))
        #expect(throws: DAVPath.Problem.elsewhere) { try DAVPath.destination("http://example.com/dav/files/b.txt", isServed: served) }
        #expect(throws: DAVPath.Problem.self) { try DAVPath.destination(nil, isServed: served) }
        #expect(throws: DAVPath.Problem.self) { try DAVPath.destination("http://127.0.0.1:8790/dav/files/../../x", isServed: served) }
        // Every name goes out and comes back the same.
        for name in ["plain.txt", "with space", "百分号%与#井号?", "a+b;c=d", "~tilde"] {
            let item = VirtualPath(mount: "files", trustedComponents: ["Folder", name])
            let href = DAVPath.href(item, isCollection: false)
            #expect(!href.contains(" ") && !href.contains("#") && !href.contains("?"))
            #expect(try DAVPath.item(href) == item, "\(href)")
        }
        #expect(DAVPath.href(.root(of: "files"), isCollection: true) == "/dav/files/")
        #expect(DAVPath.href(VirtualPath(mount: "files", trustedComponents: ["Docs"]), isCollection: true) == "/dav/files/Docs/")
    }

    @Test func multistatusIsWellFormedAndSaysEachStatus() throws {
        var answer = DAVMultistatus()
        answer.add(href: "/dav/files/a&b.txt", found: [(.dav("getcontentlength"), "12"), (QualifiedName("urn:z", "color"), "red &lt;")],
                   missing: [QualifiedName("urn:z", "missing")])
        answer.add(href: "/dav/files/locked", status: 423)
        answer.add(href: "/dav/files/c", statuses: [(.dav("displayname"), 403), (QualifiedName("urn:z", "color"), 424)])
        var bytes = answer.take()
        bytes += answer.finish()
        let root = try DAVXML.parse(bytes)
        #expect(root.name == .dav("multistatus"))
        let responses = root.children.filter { $0.name == .dav("response") }
        #expect(responses.map { $0.child(.dav("href"))?.text } == ["/dav/files/a&b.txt", "/dav/files/locked", "/dav/files/c"])
        let first = responses[0].children.filter { $0.name == .dav("propstat") }
        #expect(first.map { $0.child(.dav("status"))?.text } == ["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found"])
        #expect(first[0].child(.dav("prop"))?.child(QualifiedName("urn:z", "color"))?.text == "red <")
        #expect(responses[1].child(.dav("status"))?.text == "HTTP/1.1 423 Locked")
        #expect(responses[2].children.compactMap { $0.child(.dav("status"))?.text } == ["HTTP/1.1 403 Forbidden", "HTTP/1.1 424 Failed Dependency"])
        // A property of no namespace, and a name XML cannot hold, still make well-formed XML.
        var odd = DAVMultistatus()
        odd.add(href: "/dav/files/a", found: [(.dav("displayname"), DAVXML.escaped("a\u{1}b"))], missing: [QualifiedName("", "plain")])
        let oddRoot = try DAVXML.parse(odd.finish())
        let props = oddRoot.child(.dav("response"))?.children.compactMap { $0.child(.dav("prop")) } ?? []
        #expect(props.first?.child(.dav("displayname"))?.text == "a\u{FFFD}b")
        #expect(props.last?.child(QualifiedName("", "plain")) != nil)
        let plain = DAVElement(name: QualifiedName("", "plain"), children: [], text: "t")
        #expect(try DAVXML.parse(Array(plain.serialized.utf8)) == plain)
    }

    @Test func namespacesThatAreNotDeclaredAreRefused() throws {
        // A prefix bound to nothing, and a prefix undeclared by `xmlns:p=""` (not allowed in XML 1.0).
        #expect(throws: DAVXML.Refusal.self) { try DAVXML.parse(bytes("<D:propfind xmlns:D='DAV:'><D:prop><Z:x/></D:prop></D:propfind>")) }
        #expect(throws: DAVXML.Refusal.self) {
            try PropertyInstruction.parse(bytes("<D:propertyupdate xmlns:D='DAV:'><D:set><D:prop><bar:x xmlns:bar=''>1</bar:x></D:prop></D:set></D:propertyupdate>"))
        }
        // The empty default namespace is allowed: a property in no namespace.
        let none = try PropertyInstruction.parse(bytes("<D:propertyupdate xmlns:D='DAV:'><D:set><D:prop><x xmlns=''>1</x></D:prop></D:set></D:propertyupdate>"))
        #expect(none.map(\.name.name) == ["x"])
    }

    @Test func ifHeaders() throws {
        let file = try VirtualPath(parsing: "files:/a.txt")
        let token = "opaquelocktoken:e71d4fae-5dec-22d6-fea5-00a0c91e6be4"
        func holds(_ text: String, locked: Bool = true, etag: String? = "\"v1\"") throws -> Bool {
            let header = try #require(DAVIfHeader(text))
            return header.holds(for: file, item: { url in url.hasSuffix("/dav/files/a.txt") ? .some(file) : .none },
                                tokens: { _ in locked ? [token] : [] }, etag: { _ in etag })
        }
        #expect(try holds("(<\(token)>)"))
        #expect(try !holds("(<\(token)>)", locked: false))
        #expect(try holds("(<\(token)> [\"v1\"])"))
        #expect(try !holds("(<\(token)> [\"v2\"])"))
        // Weak tags never match; `Not <DAV:no-lock>` always holds; any one list is enough.
        #expect(try !holds("([W/\"v1\"])"))
        #expect(try holds("(<opaquelocktoken:other>) (Not <DAV:no-lock>)"))
        #expect(try holds("<http://127.0.0.1:8790/dav/files/a.txt> (<\(token)> [\"v1\"])"))
        #expect(try !holds("<http://elsewhere/x> (<\(token)>)"))
        #expect(DAVIfHeader("(<a>) (Not <b>) <http://x/y> (<c>)") == nil, "tagged and untagged lists are not mixed")
        #expect(DAVIfHeader("(<a>) (Not <b>)")?.tokens == ["a"])
        for malformed in ["", "()", "(<a>", "<a>", "(<>)", "(x)", "[\"e\"]", "(Not)"] { #expect(DAVIfHeader(malformed) == nil, "\(malformed)") }
    }

    @Test func locksConflictCoverAndOutlastTheServer() throws {
        let folder = try VirtualPath(parsing: "files:/Docs"), inside = try VirtualPath(parsing: "files:/Docs/In/a.txt")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dav-locks-\(UUID()).json").path
        defer { unlink(file) }
        let locks = DAVLocks(file: file)
        let deep = try locks.lock(folder, isCollection: true, isDeep: true, isExclusive: false, owner: nil, seconds: 60)
        // A shared lock admits another shared one, not an exclusive one, on the folder or inside it.
        let other = try locks.lock(folder, isCollection: true, isDeep: false, isExclusive: false, owner: "<D:href xmlns:D=\"DAV:\">me</D:href>", seconds: 60)
        #expect(throws: DAVLocks.Refusal.conflicts(with: deep)) {
            try locks.lock(inside, isCollection: false, isDeep: false, isExclusive: true, owner: nil, seconds: 60)
        }
        #expect(locks.covering(inside) == [deep])
        #expect(locks.blocking(inside, members: false, tokens: []) == deep)
        #expect(locks.blocking(inside, members: false, tokens: [deep.token]) == nil)
        // Either shared lock's token will do for the folder itself.
        #expect(locks.blocking(folder, members: false, tokens: [other.token]) == nil)
        #expect(locks.blocking(try VirtualPath(parsing: "files:/"), members: true, tokens: []) != nil, "changing what holds it")

        // Another server on the same file finds them, with their timeouts.
        let restarted = DAVLocks(file: file)
        #expect(restarted.covering(folder).map(\.token).sorted() == [deep.token, other.token].sorted())
        #expect(restarted.refresh([other.token], at: folder, seconds: 120)?.seconds == 120)
        #expect(restarted.unlock(deep.token, at: inside), "released through a member it covers")
        #expect(!restarted.unlock(deep.token, at: inside))
        restarted.forget(within: folder)
        #expect(DAVLocks(file: file).covering(folder).isEmpty)

        // An expired lock governs nothing.
        _ = try DAVLocks(file: file).lock(inside, isCollection: false, isDeep: false, isExclusive: true, owner: nil, seconds: 0)
        #expect(DAVLocks(file: file).covering(inside).isEmpty)
    }

    @Test func syncClientHeaders() throws {
        #expect(DAVSyncClients.modificationDate("1600000000")?.timeIntervalSince1970 == 1_600_000_000)
        #expect(DAVSyncClients.modificationDate("1600000000.5")?.timeIntervalSince1970 == 1_600_000_000.5)
        for bad in [nil, "", "soon", "-1", "nan", "1e300"] { #expect(DAVSyncClients.modificationDate(bad) == nil) }
        #expect(DAVSyncClients.checksums("SHA1:ABC md5:def ADLER32:1") == [.sha1: "abc", .md5: "def"])
        #expect(DAVSyncClients.checksums("nonsense").isEmpty)
        // Kept for the file's size and time; shown only while both are as they were.
        let node = FileNode(path: try VirtualPath(parsing: "files:/a"), kind: .file, size: 5, modificationDate: Date(timeIntervalSince1970: 10),
                            typeIdentifier: "public.data")
        let kept = DAVSyncClients.stored([.sha1: "aa", .md5: "bb"], for: node)
        #expect(DAVSyncClients.property(of: node, attributes: [DAVSyncClients.attribute: kept])?.contains("SHA1:aa MD5:bb") == true)
        var changed = node
        changed.modificationDate = Date(timeIntervalSince1970: 11)
        #expect(DAVSyncClients.property(of: changed, attributes: [DAVSyncClients.attribute: kept]) == nil)
    }

    @Test func namesWindowsCannotHold() {
        for name in ["a:b.txt", "what?.md", "trailing.", "trailing ", "CON", "con.txt", "LPT1.log", "tab\there", "pipe|d"] {
            #expect(WindowsNames.problem(name) != nil, "\(name)")
        }
        for name in ["report.pdf", "笔记 2026.txt", ".hidden", "CONSOLE.txt", "COM10"] { #expect(WindowsNames.problem(name) == nil, "\(name)") }
        #expect(WindowsNames.isWindows(userAgent: "Microsoft-WebDAV-MiniRedir/10.0.19045"))
        #expect(!WindowsNames.isWindows(userAgent: "rclone/v1.60.1"))
    }
}
