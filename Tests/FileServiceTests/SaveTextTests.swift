import CofferCore
import CofferTestSupport
import FileService
import Foundation
import Testing

/// Saving text (issue 50): the session keeps the file's encoding and decides a host file's
/// conflict, so the REPL's `write`, RPC and MCP's `edit_file` save alike.
struct SaveTextTests {
    let fixture: HostFixture
    init() async throws { fixture = try await HostFixture("save-text") }

    var directory: TemporaryDirectory { fixture.directory }
    var session: Session { fixture.session }
    func path(_ text: String) throws(CofferError) -> VirtualPath { try fixture.path(text) }
    func host(_ relative: String) -> String { directory.url("host/" + relative) }
    /// The bytes of the file at `relative` in the fixture's folder.
    func bytes(at relative: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: directory.url(relative)))) }

    /// “年度报告\n” in GB 18030.
    let gb: [UInt8] = [0xC4, 0xEA, 0xB6, 0xC8, 0xB1, 0xA8, 0xB8, 0xE6, 0x0A]

    @Test func textIsWrittenInTheFilesOwnEncoding() async throws {
        try Data(gb).write(to: URL(fileURLWithPath: directory.url(fixture.user("gb.txt"))))
        let file = try path("files:/gb.txt")
        let version = try #require(try await session.perform(StatItem(file)).version)
        let saved = try await session.perform(SaveText(.file(file), text: Array("那\n".utf8), ifVersion: version))
        #expect(saved.form.charset == .gb18030)
        #expect(try bytes(at: fixture.user("gb.txt")) == [0xC4, 0xC7, 0x0A])
        // Added at the end, in the same encoding.
        _ = try await session.perform(SaveText(.file(file), text: Array("里\n".utf8), appending: true))
        #expect(try bytes(at: fixture.user("gb.txt")) == [0xC4, 0xC7, 0x0A, 0xC0, 0xEF, 0x0A])
        // Input that is not UTF-8 is not guessed at: written as it is.
        _ = try await session.perform(SaveText(.file(file), text: [0xFF, 0xFE, 0x41], conflict: .replace))
        #expect(try bytes(at: fixture.user("gb.txt")) == [0xFF, 0xFE, 0x41])
    }

    @Test func newAndUTF8FilesGetTheTextAsItIs() async throws {
        let file = try path("files:/new.md")
        let made = try await session.perform(SaveText(.file(file), text: Array("# 标题\n".utf8)))
        #expect(made.form == .utf8)
        #expect(try bytes(at: fixture.user("new.md")) == Array("# 标题\n".utf8))
        // A name taken is the session's to decide, as for any write (`fail` by default here).
        let taken = await thrownError(of: try await session.perform(SaveText(.file(file), text: Array("x".utf8))))
        #expect(taken?.kind == .fileExists)
        let beside = try await session.perform(SaveText(.file(file), text: Array("x".utf8), conflict: .keepBoth))
        guard case .file(let node, _) = beside else { Issue.record("not a file of a mount"); return }
        #expect(node.path.description == "files:/new (2).md")
    }

    @Test func aHostFileKeepsItsEncodingAndItsConflictIsDecidedOnce() async throws {
        var utf16: [UInt8] = [0xFF, 0xFE]
        utf16 += Array("旧\n".data(using: .utf16LittleEndian)!)
        try Data(utf16).write(to: URL(fileURLWithPath: host("note.txt")))
        let id = try await session.perform(OpenHostFile(host("note.txt"))).bookmark.id
        let saved = try await session.perform(SaveText(.bookmark(id), text: Array("新\n".utf8)))
        guard case .host(let result, let form) = saved else { Issue.record("not a host file"); return }
        #expect(form == TextForm(charset: .utf16LittleEndian, byteOrderMark: true))
        var expected: [UInt8] = [0xFF, 0xFE]
        expected += Array("新\n".data(using: .utf16LittleEndian)!)
        #expect(try bytes(at: "host/note.txt") == expected)
        // keepBoth saves beside it; with a version it is a conditional save in place instead,
        // as WriteFile decides for a file of a mount.
        #expect(SaveText.hostSaveMode(conflict: .keepBoth, ifVersion: nil) == .keepBoth)
        #expect(SaveText.hostSaveMode(conflict: .keepBoth, ifVersion: result.version) == .replace(ifVersion: result.version))
        #expect(SaveText.hostSaveMode(conflict: nil, ifVersion: nil) == .replace(ifVersion: nil))
        let stale = await thrownError(of: try await session.perform(
            SaveText(.bookmark(id), text: Array("x".utf8), conflict: .keepBoth, ifVersion: FileVersion(token: "0000000000000000"))))
        #expect(stale?.kind == .changedSinceRead)
        #expect(try bytes(at: "host/note.txt") == expected)
        let appended = await thrownError(of: try await session.perform(SaveText(.bookmark(id), text: [0x41], appending: true)))
        #expect(appended?.kind == .invalidArgument)
        // Asked not to overwrite, with no version to compare: refused, never written unasked.
        for conflict in [ConflictChoice.fail, .ask] {
            let refused = await thrownError(of: try await session.perform(SaveText(.bookmark(id), text: Array("y".utf8), conflict: conflict)))
            #expect(refused?.kind == .invalidArgument, "\(conflict)")
        }
        #expect(try bytes(at: "host/note.txt") == expected)
    }
}
