import CofferCore
import CofferInMemory
import CofferTestSupport
import FileService
import Foundation
import Synchronization
import Testing

/// Versions and conditional saves (issue 33): a save names the version it read, and is
/// refused, writing nothing, when the file changed since.
struct ConditionalWriteTests {
    let fixture: ServiceFixture
    init() async throws { fixture = try await ServiceFixture("conditional") }

    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }
    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }

    @Test func aFileHasAVersionThatChangesWithItsContentOnly() async throws {
        let session = fixture.session
        let written = try await session.perform(WriteFile(try path("/a.txt"), bytes: Array("one".utf8)))
        let version = try #require(written.version)
        #expect(try await session.perform(StatItem(try path("/a.txt"))).version == version)
        let listed = try await session.perform(ListFolder(try path("/"))).items
        #expect(listed.first { $0.name == "a.txt" }?.version == version)
        #expect(listed.first { $0.name == "Download" }?.version == nil, "folders have none")
        // Another program writing the same bytes still makes a new version (the times change).
        fixture.directory.make([user("a.txt"): "one"])
        let rewritten = try #require(try await session.perform(StatItem(try path("/a.txt"))).version)
        #expect(rewritten != version)
        #expect(FileVersion(token: rewritten.token) == rewritten && rewritten.token.count == 16)
    }

    @Test func theFirstSaveWinsAndTheSecondIsRefused() async throws {
        let first = fixture.session
        let second = try fixture.service.openSession(SessionOptions(frontEnd: "other"))
        let file = try path("/Notes.md")
        _ = try await first.perform(WriteFile(file, bytes: Array("draft\n".utf8)))
        guard case .text(let readByFirst) = try await first.perform(ReadRange(file, length: 100, as: .text)),
              case .text(let readBySecond) = try await second.perform(ReadRange(file, length: 100, as: .text))
        else { Issue.record("not read as text"); return }
        let version = try #require(readByFirst.version)
        #expect(readBySecond.version == version)

        let saved = try await first.perform(WriteFile(file, bytes: Array("first\n".utf8), ifVersion: version))
        #expect(saved.version != version)
        let error = await #expect(throws: CofferError.self) {
            try await second.perform(WriteFile(file, bytes: Array("second\n".utf8), ifVersion: version))
        }
        #expect(error?.kind == .changedSinceRead)
        #expect(fixture.directory.contents(user("Notes.md")) == "first\n")
        let message = try #require(error).userMessage(in: .english).text
        #expect(message.hasPrefix("“files:/Notes.md” was changed by someone else after it was read (last modified 20"), "\(message)")
        #expect(message.hasSuffix("nothing was written."))
        #expect(try #require(error).userMessage(in: .simplifiedChinese).text.contains("未写入任何内容"))
        // The save that won replaced the draft, which is a version; the refused one left nothing.
        #expect(try await first.perform(ListTrash()).items.isEmpty)
        #expect(try await first.perform(ListVersions(file)).count == 1)
        #expect(fixture.directory.names(user("")).filter { $0.hasPrefix(".") }.isEmpty)
    }

    @Test func aFileDeletedSinceItWasReadIsNotRecreated() async throws {
        let session = fixture.session
        let file = try path("/gone.txt")
        let version = try #require(try await session.perform(WriteFile(file, bytes: [1])).version)
        _ = try await session.perform(TrashItems([file]))
        let error = await #expect(throws: CofferError.self) {
            try await session.perform(WriteFile(file, bytes: [2], ifVersion: version))
        }
        #expect(error?.kind == .changedSinceRead && error?.detail == "deleted")
        #expect(try #require(error).userMessage(in: .english).text == "“files:/gone.txt” was deleted or moved after it was read; nothing was written.")
        #expect(!fixture.directory.exists(user("gone.txt")))
    }

    @Test func appendsAndUploadCommitsAreConditionalToo() async throws {
        let session = fixture.session
        let log = try path("/log.txt")
        let version = try #require(try await session.perform(WriteFile(log, bytes: Array("1\n".utf8))).version)
        let appended = try await session.perform(AppendToFile(log, bytes: Array("2\n".utf8), ifVersion: version))
        await #expect(throws: CofferError.self) { try await session.perform(AppendToFile(log, bytes: Array("x\n".utf8), ifVersion: version)) }
        #expect(fixture.directory.contents(user("log.txt")) == "1\n2\n")

        let upload = try await session.perform(BeginUpload(log, conflict: .policy(.replace)))
        _ = try await session.perform(AppendUpload(upload, offset: 0, bytes: Array("uploaded\n".utf8)))
        let stale = await #expect(throws: CofferError.self) { try await session.perform(CommitUpload(upload, ifVersion: version)) }
        #expect(stale?.kind == .changedSinceRead)
        #expect(fixture.directory.contents(user("log.txt")) == "1\n2\n")
        let again = try await session.perform(BeginUpload(log, conflict: .policy(.replace)))
        _ = try await session.perform(AppendUpload(again, offset: 0, bytes: Array("uploaded\n".utf8)))
        let current = try #require(appended.version)
        _ = try await session.perform(CommitUpload(again, ifVersion: current))
        #expect(fixture.directory.contents(user("log.txt")) == "uploaded\n")
    }

    @Test func theInMemoryBackendKeepsVersionsToo() async throws {
        let memory = InMemoryBackend()
        let service = FileService(mounts: [Mount(name: "files", backend: memory)])
        let session = try service.openSession(SessionOptions(frontEnd: "test"))
        let file = try path("/m.txt")
        let first = try #require(try await session.perform(WriteFile(file, bytes: [1])).version)
        let writer = try await memory.makeWrite(at: file)
        try await writer.write([2])
        try await writer.commit(conflict: .replace)
        let second = try #require(try await session.perform(StatItem(file)).version)
        #expect(first != second)
        let error = await #expect(throws: CofferError.self) { try await session.perform(WriteFile(file, bytes: [3], ifVersion: first)) }
        #expect(error?.kind == .changedSinceRead)
    }
}

/// Edits in an editor program (the REPL's `edit`), as the session does them: a private
/// UTF-8 copy, saved back in the file's own encoding over the version copied.
struct EditDraftTests {
    let fixture: ServiceFixture
    init() async throws { fixture = try await ServiceFixture("edit") }

    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }

    /// Stands in for the editor: what it saves in the copy.
    func edit(_ draft: EditDraft, to text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: draft.draftPath))
    }

    @Test func theCopyIsPrivateUTF8AndTheSaveKeepsTheEncodingAndLineEndings() async throws {
        let utf16: [UInt8] = [0xFF, 0xFE] + Array("中文\r\nline\r\n".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        try Data(utf16).write(to: URL(fileURLWithPath: fixture.directory.url(user("wide.txt"))))
        let draft = try await fixture.session.perform(BeginEdit(.file(try VirtualPath(parsing: "/wide.txt"))))
        #expect(draft.form == TextForm(charset: .utf16LittleEndian) && !draft.isNew)
        #expect((draft.draftPath as NSString).lastPathComponent == "wide.txt")
        #expect(draft.draftPath.hasPrefix(fixture.directory.url("c/tmp/")))
        #expect(try String(contentsOfFile: draft.draftPath, encoding: .utf8) == "中文\r\nline\r\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: draft.draftPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        try edit(draft, to: "中文\r\nchanged\r\n")
        let outcome = try await fixture.session.perform(FinishEdit(draft))
        #expect(outcome == .saved(location: "files:/wide.txt", form: TextForm(charset: .utf16LittleEndian)))
        let expected: [UInt8] = [0xFF, 0xFE] + Array("中文\r\nchanged\r\n".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: fixture.directory.url(user("wide.txt"))))) == expected)
        #expect(!FileManager.default.fileExists(atPath: draft.draftPath), "the copy is gone once saved")
    }

    @Test func anUnchangedCopySavesNothingAndANewNameMakesAFile() async throws {
        fixture.directory.make([user("same.txt"): "same\n"])
        let draft = try await fixture.session.perform(BeginEdit(.file(try VirtualPath(parsing: "/same.txt"))))
        let before = try FileManager.default.attributesOfItem(atPath: fixture.directory.url(user("same.txt")))[.modificationDate] as? Date
        #expect(try await fixture.session.perform(FinishEdit(draft)) == .unchanged)
        #expect(try FileManager.default.attributesOfItem(atPath: fixture.directory.url(user("same.txt")))[.modificationDate] as? Date == before)

        let new = try await fixture.session.perform(BeginEdit(.file(try VirtualPath(parsing: "/新 note.md"))))
        #expect(new.isNew)
        try edit(new, to: "# 新\n")
        _ = try await fixture.session.perform(FinishEdit(new))
        #expect(fixture.directory.contents(user("新 note.md")) == "# 新\n")
        // Not in a folder that is not there, and not a binary file.
        await #expect(throws: CofferError.self) { try await fixture.session.perform(BeginEdit(.file(try VirtualPath(parsing: "/No/x.txt")))) }
        try Data([0, 1, 2, 0xFF]).write(to: URL(fileURLWithPath: fixture.directory.url(user("blob.bin"))))
        let binary = await #expect(throws: CofferError.self) {
            try await fixture.session.perform(BeginEdit(.file(try VirtualPath(parsing: "/blob.bin"))))
        }
        #expect(binary?.kind == .unsupported && binary?.detail == "not-text")
    }

    @Test func aChangeMeanwhileIsRefusedAndTheEditIsKeptForAnotherChoice() async throws {
        fixture.directory.make([user("plan.txt"): "v1\n"])
        let draft = try await fixture.session.perform(BeginEdit(.file(try VirtualPath(parsing: "/plan.txt"))))
        try edit(draft, to: "mine\n")
        fixture.directory.make([user("plan.txt"): "theirs\n"])
        let error = await #expect(throws: CofferError.self) { try await fixture.session.perform(FinishEdit(draft)) }
        #expect(error?.kind == .changedSinceRead)
        #expect(fixture.directory.contents(user("plan.txt")) == "theirs\n")
        #expect(FileManager.default.fileExists(atPath: draft.draftPath), "the edited copy stays")
        let kept = try await fixture.session.perform(FinishEdit(draft, choice: .keepInFiles))
        #expect(kept == .saved(location: "files:/Recovered/plan.txt", form: .utf8))
        #expect(fixture.directory.contents(user("Recovered/plan.txt")) == "mine\n")
        #expect(fixture.directory.contents(user("plan.txt")) == "theirs\n")
    }

    /// "This file changed since you read it" is asked once, by the session, with one set of
    /// choices, for an edit and for a write that lets it ask; each answer does what it says,
    /// and no answer leaves the refusal.
    @Test func theSessionAsksOnceWhatToDoWithAFileChangedSinceItWasRead() async throws {
        let session = try fixture.service.openSession(SessionOptions(frontEnd: "test"))
        let answers = Mutex<[ChangedFileChoice?]>([])
        let asked = Mutex<[(String, [ChangedFileChoice])]>([])
        session.changedFileQuestion = { refusal, choices in
            asked.withLock { $0.append((refusal.userMessage(in: .english).text, choices)) }
            return answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
        let file = try VirtualPath(parsing: "/plan.txt")
        func race(_ answer: ChangedFileChoice?) async throws -> Result<FileNode, CofferError> {
            fixture.directory.make([user("plan.txt"): "v1\n"])
            let version = try #require(await session.perform(StatItem(file)).version)
            fixture.directory.make([user("plan.txt"): "theirs\n"])
            answers.withLock { $0 = [answer] }
            let outcome = await session.performReporting(WriteFile(file, bytes: Array("mine\n".utf8), conflict: .ask, ifVersion: version))
            return outcome.value
        }
        // Cancelled: the refusal stands, nothing written.
        guard case .failure(let refusal) = try await race(nil) else { Issue.record("a cancelled save was made"); return }
        #expect(refusal.kind == .changedSinceRead)
        #expect(fixture.directory.contents(user("plan.txt")) == "theirs\n")
        #expect(asked.withLock { $0.last?.0.contains("was changed by someone else") == true && $0.last?.1 == ChangedFileChoice.allCases })
        // Overwrite: theirs to the trash, mine in its place.
        #expect(try await race(.overwrite).get().path == file)
        #expect(fixture.directory.contents(user("plan.txt")) == "mine\n")
        // Keep both: beside it.
        #expect(try await race(.keepBoth).get().path == (try VirtualPath(parsing: "/plan (2).txt")))
        #expect(fixture.directory.contents(user("plan.txt")) == "theirs\n")
        // Keep in Recovered.
        #expect(try await race(.keepInRecovered).get().path == (try VirtualPath(parsing: "/Recovered/plan.txt")))
        #expect(fixture.directory.contents(user("Recovered/plan.txt")) == "mine\n")
        // A write that does not let it ask is refused without a question.
        let before = asked.withLock { $0.count }
        fixture.directory.make([user("plan.txt"): "v1\n"])
        let version = try #require(await session.perform(StatItem(file)).version)
        fixture.directory.make([user("plan.txt"): "theirs\n"])
        let refused = await #expect(throws: CofferError.self) {
            try await session.perform(WriteFile(file, bytes: Array("mine\n".utf8), ifVersion: version))
        }
        #expect(refused?.kind == .changedSinceRead && asked.withLock { $0.count } == before)
        // An edit asks the same question, and takes the answer.
        let draft = try await session.perform(BeginEdit(.file(file)))
        try edit(draft, to: "edited\n")
        fixture.directory.make([user("plan.txt"): "theirs again\n"])
        answers.withLock { $0 = [.keepBoth] }
        #expect(try await session.perform(FinishEdit(draft)) == .saved(location: "files:/plan (3).txt", form: .utf8))
        #expect(asked.withLock { $0.count } == before + 1)
        await session.close()
    }

    @Test func aByteThatIsNotUTF8IsRefusedWithItsLine() async throws {
        let gb: [UInt8] = [0xC4, 0xE3, 0xBA, 0xC3, 0x0A]  // 你好 in GB 18030
        try Data(gb).write(to: URL(fileURLWithPath: fixture.directory.url(user("gb.txt"))))
        let draft = try await fixture.session.perform(BeginEdit(.file(try VirtualPath(parsing: "/gb.txt"))))
        #expect(draft.form.charset == .gb18030)
        try Data(Array("你好\nok\n".utf8) + [0xFF] + Array("\n".utf8)).write(to: URL(fileURLWithPath: draft.draftPath))
        let error = await #expect(throws: CofferError.self) { try await fixture.session.perform(FinishEdit(draft)) }
        #expect(error?.kind == .notEncodable && error?.detail == "3")
        #expect(try #require(error).userMessage(in: .english).text.contains("line 3"))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: fixture.directory.url(user("gb.txt"))))) == gb)
        try edit(draft, to: "你好，世界\n")
        _ = try await fixture.session.perform(FinishEdit(draft))
        let saved = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.directory.url(user("gb.txt")))))
        #expect(saved == [0xC4, 0xE3, 0xBA, 0xC3, 0xA3, 0xAC, 0xCA, 0xC0, 0xBD, 0xE7, 0x0A])
    }
}
