import CofferCore
import CofferTestSupport
@_spi(Engine) import FileService
import Foundation
import Testing

/// Appending: the file is written anew and replaces the old one only when complete.
struct AppendTests {
    let fixture: ServiceFixture
    init() async throws { fixture = try await ServiceFixture("append") }

    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }
    /// What the user's folder holds besides the folders every container has.
    var names: [String] { fixture.directory.names(user("")).filter { !["Download", "Import"].contains($0) }.sorted() }

    @Test func bytesGoAtTheEndAndAMissingFileIsMade() async throws {
        fixture.directory.make([user("log.txt"): "one\n"])
        let node = try await fixture.session.perform(AppendToFile(try VirtualPath(parsing: "/log.txt"), bytes: Array("two\n".utf8)))
        #expect(node.size == 8 && fixture.directory.contents(user("log.txt")) == "one\ntwo\n")
        _ = try await fixture.session.perform(AppendToFile(try VirtualPath(parsing: "/new.txt"), bytes: Array("first".utf8)))
        #expect(fixture.directory.contents(user("new.txt")) == "first")
        // Nothing is left beside the file.
        #expect(names == ["log.txt", "new.txt"])
        let audit = fixture.directory.contents("c/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        #expect(audit.contains(#""method":"append""#))
    }

    @Test func aFolderOrASpecialFileIsNotAppendedTo() async throws {
        fixture.directory.make([user("Folder/x"): "x"])
        try #require(mkfifo(fixture.directory.url(user("pipe")), 0o644) == 0)
        await #expect(throws: CofferError.self) { try await fixture.session.perform(AppendToFile(try VirtualPath(parsing: "/Folder"), bytes: [1])) }
        await #expect(throws: CofferError.self) { try await fixture.session.perform(AppendToFile(try VirtualPath(parsing: "/pipe"), bytes: [1])) }
    }

    @Test func aCancelledAppendLeavesTheFileAsItWas() async throws {
        try fixture.directory.makeSparseFile(user("big.bin"), gigabytes: 1)
        let path = try VirtualPath(parsing: "/big.bin")
        let session = fixture.session
        let append = Task { try await session.perform(AppendToFile(path, bytes: [1, 2, 3])) }
        // Cancelled while it copies the old content (a second's work), or before it starts.
        try await Task.sleep(for: .milliseconds(50))
        append.cancel()
        await #expect(throws: (any Error).self) { try await append.value }
        let node = try await fixture.service.stat(path)
        #expect(node.size == 1 << 30)
        #expect(names == ["big.bin"])
    }
}
