import CofferBackends
import CofferCore
import CofferTestSupport
import Foundation
import Testing

/// Links, races and odd names must never let the local backend read, list, create or
/// change anything outside its root. Every test runs with both resolution strategies.
struct ConfinementTests {
    static let strategies: [LocalSandboxBackend.Resolution] = [.openat2, .componentWalk]

    /// A root with hostile links, and an outside folder holding a secret.
    final class Fixture {
        let base = TemporaryDirectory("confine")
        var root: String { base.url("root") }
        var outside: String { base.url("outside") }
        let backend: LocalSandboxBackend

        init(_ resolution: LocalSandboxBackend.Resolution) throws {
            base.make(["root/inside/a.txt": "inside", "outside/secret.txt": "SECRET", "outside/folder/": ""])
            base.link("root/file-link", to: base.url("outside/secret.txt"))
            base.link("root/folder-link", to: base.url("outside"))
            base.link("root/relative-link", to: "../outside")
            base.link("root/inside/deep-relative", to: "../../outside/secret.txt")
            base.link("root/dangling", to: base.url("outside/missing"))
            base.link("root/chain1", to: "chain2")
            base.link("root/chain2", to: base.url("outside"))
            base.link("root/loop1", to: "loop2")
            base.link("root/loop2", to: "loop1")
            base.link("root/inner-link", to: "inside")
            backend = try LocalSandboxBackend(rootPath: base.url("root"), resolution: resolution, syncBeforeCommit: false)
        }

        /// What is outside, to compare before and after.
        func outsideSnapshot() -> [String] {
            let enumerator = FileManager.default.enumerator(atPath: outside)!
            return (enumerator.allObjects as! [String]).sorted().map { "\($0)=\(base.contents("outside/\($0)") ?? "")" }
        }
    }

    static let linkNames = ["file-link", "folder-link", "relative-link", "dangling", "chain1", "loop1", "inner-link",
                            "inside/deep-relative"]

    @Test(arguments: strategies)
    func linksAreListedAsLinksNeverFollowed(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        let nodes = try await fixture.backend.contentsOfFolder(at: .root())
        let byName = Dictionary(uniqueKeysWithValues: nodes.map { ($0.name, $0) })
        for name in ["file-link", "folder-link", "relative-link", "dangling", "chain1", "loop1", "inner-link"] {
            let node = try #require(byName[name])
            #expect(node.special == .symbolicLink, "\(name)")
            #expect(node.kind == .file)
            #expect(node.typeIdentifier == "public.symlink")
        }
        #expect(byName["relative-link"]?.linkTarget == "../outside")
    }

    @Test(arguments: strategies)
    func nothingOutsideCanBeRead(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        for name in Self.linkNames {
            let path = try VirtualPath(parsing: "/" + name)
            await #expect(throws: CofferError.self, "open \(name)") { _ = try await fixture.backend.openFile(at: path) }
            await #expect(throws: CofferError.self, "list \(name)") { _ = try await fixture.backend.contentsOfFolder(at: path) }
            let below = try VirtualPath(parsing: "/\(name)/secret.txt")
            await #expect(throws: CofferError.self, "open below \(name)") { _ = try await fixture.backend.openFile(at: below) }
            await #expect(throws: CofferError.self, "stat below \(name)") { _ = try await fixture.backend.node(at: below) }
        }
        // `..` after a link is resolved lexically first: it can only name something inside.
        let dotDot = try VirtualPath(parsing: "/folder-link/../secret.txt")
        #expect(dotDot.components == ["secret.txt"])
        await #expect(throws: CofferError.self) { _ = try await fixture.backend.openFile(at: dotDot) }
    }

    @Test(arguments: strategies)
    func nothingOutsideCanBeCreatedOrChanged(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        let before = fixture.outsideSnapshot()
        let backend = fixture.backend
        for name in Self.linkNames {
            let inside = try VirtualPath(parsing: "/\(name)/new")
            await #expect(throws: CofferError.self) { try await backend.createFolder(at: inside) }
            await #expect(throws: CofferError.self) { _ = try await backend.makeWrite(at: inside) }
            await #expect(throws: CofferError.self) {
                try await backend.moveItem(at: try VirtualPath(parsing: "/inside/a.txt"), to: inside, conflict: .fail)
            }
            await #expect(throws: CofferError.self) {
                try await backend.copyItem(at: try VirtualPath(parsing: "/inside"), to: inside, conflict: .replace,
                                           progress: .none)
            }
            await #expect(throws: CofferError.self) {
                try await backend.removeItem(at: try VirtualPath(parsing: "/\(name)/secret.txt"))
            }
        }
        // Replacing or writing over the link itself changes the link, never its target.
        let write = try await backend.makeWrite(at: try VirtualPath(parsing: "/file-link"))
        try await write.write(Array("replaced".utf8))
        try await write.commit(conflict: .replace)
        #expect(fixture.base.contents("root/file-link") == "replaced")
        try await backend.removeItem(at: try VirtualPath(parsing: "/folder-link"))
        #expect(fixture.outsideSnapshot() == before)
        #expect(fixture.base.contents("outside/secret.txt") == "SECRET")
    }

    @Test(arguments: strategies)
    func copyingAFolderCopiesLinksAsLinks(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        try await fixture.backend.copyItem(at: try VirtualPath(parsing: "/inside"), to: try VirtualPath(parsing: "/copy"),
                                           conflict: .fail, progress: .none)
        let destination = try FileManager.default.destinationOfSymbolicLink(atPath: fixture.base.url("root/copy/deep-relative"))
        #expect(destination == "../../outside/secret.txt")
        #expect(fixture.base.contents("root/copy/a.txt") == "inside")
    }

    @Test(arguments: strategies)
    func pipesAreListedButNeverOpened(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        #expect(mkfifo(fixture.base.url("root/inside/pipe"), 0o644) == 0)
        let nodes = try await fixture.backend.contentsOfFolder(at: try VirtualPath(parsing: "/inside"))
        #expect(nodes.first { $0.name == "pipe" }?.special == .fifo)
        // Opening would block forever if the backend opened it; it must refuse at once.
        await #expect(throws: CofferError.self) {
            _ = try await fixture.backend.openFile(at: try VirtualPath(parsing: "/inside/pipe"))
        }
        try await fixture.backend.copyItem(at: try VirtualPath(parsing: "/inside"), to: try VirtualPath(parsing: "/c"),
                                           conflict: .fail, progress: .none)
        #expect(!fixture.base.exists("root/c/pipe"))
        #expect(fixture.base.exists("root/c/a.txt"))
    }

    @Test(arguments: strategies)
    func aFileSwappedForALinkWhileBeingReadKeepsReadingTheFile(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        let reader = try await fixture.backend.openFile(at: try VirtualPath(parsing: "/inside/a.txt"))
        try FileManager.default.removeItem(atPath: fixture.base.url("root/inside/a.txt"))
        fixture.base.link("root/inside/a.txt", to: fixture.base.url("outside/secret.txt"))
        let bytes = try await reader.read(upTo: 100)
        #expect(String(decoding: bytes, as: UTF8.self) == "inside")
        await reader.close()
        // Opening again now meets the link, and refuses it.
        await #expect(throws: CofferError.self) {
            _ = try await fixture.backend.openFile(at: try VirtualPath(parsing: "/inside/a.txt"))
        }
    }

    @Test(arguments: strategies)
    func aFolderSwappedForALinkWhileBeingWrittenIntoDoesNotLeak(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        let before = fixture.outsideSnapshot()
        let write = try await fixture.backend.makeWrite(at: try VirtualPath(parsing: "/inside/new.txt"))
        try await write.write(Array("data".utf8))
        try FileManager.default.moveItem(atPath: fixture.base.url("root/inside"), toPath: fixture.base.url("root/moved"))
        fixture.base.link("root/inside", to: fixture.base.url("outside"))
        try await write.commit(conflict: .fail)
        #expect(fixture.outsideSnapshot() == before)
        #expect(fixture.base.contents("root/moved/new.txt") == "data")
    }

    @Test(arguments: strategies)
    func oddNamesWork(_ resolution: LocalSandboxBackend.Resolution) async throws {
        let fixture = try Fixture(resolution)
        for name in ["with space", "报告 2026", "caf\u{E9}", "cafe\u{301}", "it's \"quoted\"", String(repeating: "长", count: 85)] {
            let path = try VirtualPath(parsing: "/inside").appending(name)
            try await fixture.backend.createFolder(at: path)
            #expect(try await fixture.backend.node(at: path).kind == .folder, "\(name)")
        }
        let names = try await fixture.backend.contentsOfFolder(at: try VirtualPath(parsing: "/inside")).map(\.name)
        #expect(names.contains("caf\u{E9}") && names.contains { $0.utf8.elementsEqual("cafe\u{301}".utf8) })
        #expect(fixture.base.names("root/inside").count == 8)
        #expect(throws: CofferError.self) { _ = try VirtualPath(parsing: "/inside").appending(String(repeating: "长", count: 86)) }
    }
}
