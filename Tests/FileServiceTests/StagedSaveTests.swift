import CofferCore
import CofferInMemory
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Testing

/// Files of storage that cannot be written in place (S3; here the in-memory backend, which
/// cannot either), opened for writing as `coffer mount` opens them: a copy on local disk, sent
/// whole by `SaveUpdatedFile` as one conditional replace, and sent later by `FinishPendingSaves`
/// when the process stopped before it did.
struct StagedSaveTests {
    let directory = TemporaryDirectory("staged-save")
    let memory = InMemoryBackend()
    let service: FileService
    let session: Session

    init() async throws {
        service = try FileService.standard(container: try await Container.open(at: directory.url("c")),
                                           extraMounts: [Mount(name: "m", backend: memory)])
        session = try service.openSession(SessionOptions(frontEnd: "test"))
    }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: "m:" + text) }

    func text(_ place: String) async throws -> String? {
        guard let file = try? await session.perform(OpenFile(try path(place))) else { return nil }
        defer { Task { await file.close() } }
        return String(decoding: try await file.read(at: 0, upTo: 1 << 20), as: UTF8.self)
    }

    /// What `FinishPendingSaves` sends, asked until it sends something (for up to 10 s): a child
    /// process that another test forks shares a copy's lock until it runs its program, and a
    /// locked copy is left for the next time.
    func finishing() async throws -> [Result<FileNode, CofferError>] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let sent = try await session.perform(FinishPendingSaves())
            if !sent.isEmpty || ContinuousClock.now > deadline { return sent }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func write(_ text: String, at offset: Int64, to file: UpdatableFile) throws {
        _ = try Array(text.utf8).withUnsafeBytes { try file.write(at: offset, $0) }
    }

    /// The copies left in the uploads area.
    var copies: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.url("c/Library/Caches/Downloading"))) ?? [])
            .filter { $0.hasPrefix("mount-") }
    }

    @Test func aCopyIsWrittenAndSentWholeKeepingOneVersion() async throws {
        _ = try await session.perform(WriteFile(try path("/doc.txt"), bytes: Array("0123456789".utf8)))
        let file = try await session.perform(OpenForUpdate(try path("/doc.txt")))
        #expect(file.isStaged && !file.hasUnsentChanges)
        try write("abc", at: 4, to: file)
        #expect(file.hasUnsentChanges)
        // Nothing reaches the storage before it is sent.
        #expect(try await text("/doc.txt") == "0123456789")
        var buffer = [UInt8](repeating: 0, count: 10)
        #expect(try buffer.withUnsafeMutableBytes { try file.read(at: 0, into: $0) } == 10)
        #expect(String(decoding: buffer, as: UTF8.self) == "0123abc789")
        let sent = try await session.perform(SaveUpdatedFile(file))
        #expect(sent?.size == 10 && !file.hasUnsentChanges)
        #expect(try await text("/doc.txt") == "0123abc789")
        // Nothing new: nothing sent.
        #expect(try await session.perform(SaveUpdatedFile(file)) == nil)
        try write("!", at: 10, to: file)
        _ = try await session.perform(SaveUpdatedFile(file))
        #expect(try await text("/doc.txt") == "0123abc789!")
        file.close()
        // The second send replaced what the copy sent itself: one version, of the file as it was.
        let versions = try await service.versions(of: try path("/doc.txt"))
        #expect(versions.map(\.size) == [10])
        let kept = try await service.openVersion(try #require(versions.first?.id), of: try path("/doc.txt"))
        #expect(String(decoding: try await kept.read(upTo: 100), as: UTF8.self) == "0123456789")
        await kept.close()
        #expect(copies.isEmpty)
    }

    @Test func aNewOrEmptiedFileIsSentEvenUnwrittenAndKeepsNoVersionOfNothing() async throws {
        let made = try await session.perform(OpenForUpdate(try path("/new 新.txt"), creating: true))
        // Not in the storage until it is sent.
        #expect(try await text("/new 新.txt") == nil)
        #expect(made.hasUnsentChanges)
        _ = try await session.perform(SaveUpdatedFile(made))
        made.close()
        #expect(try await text("/new 新.txt") == "")
        let again = try await session.perform(OpenForUpdate(try path("/new 新.txt")))
        try write("words", at: 0, to: again)
        _ = try await session.perform(SaveUpdatedFile(again))
        again.close()
        #expect(try await text("/new 新.txt") == "words")
        #expect(try await service.versions(of: try path("/new 新.txt")).isEmpty)
        let emptied = try await session.perform(OpenForUpdate(try path("/new 新.txt"), truncating: true))
        #expect(emptied.hasUnsentChanges)
        _ = try await session.perform(SaveUpdatedFile(emptied))
        emptied.close()
        #expect(try await text("/new 新.txt") == "")
        #expect(try await service.versions(of: try path("/new 新.txt")).map(\.size) == [5])
        #expect(copies.isEmpty)
    }

    @Test func aChangeMadeElsewhereMeanwhileKeepsBoth() async throws {
        _ = try await session.perform(WriteFile(try path("/shared.txt"), bytes: Array("first".utf8)))
        let file = try await session.perform(OpenForUpdate(try path("/shared.txt")))
        _ = try await session.perform(WriteFile(try path("/shared.txt"), bytes: Array("theirs".utf8), conflict: .replace))
        try write("ours!", at: 0, to: file)
        let sent = try await session.perform(SaveUpdatedFile(file))
        let kept = try path("/shared (2).txt")
        #expect(sent?.path == kept)
        #expect(try await text("/shared.txt") == "theirs")
        #expect(try await text("/shared (2).txt") == "ours!")
        // Later sends from the same open file go where it was kept.
        try write("ours, again", at: 0, to: file)
        _ = try await session.perform(SaveUpdatedFile(file))
        file.close()
        #expect(try await text("/shared (2).txt") == "ours, again")
        #expect(try await text("/shared.txt") == "theirs")
    }

    @Test func aCopyClosedUnsentIsSentLaterOnce() async throws {
        _ = try await session.perform(WriteFile(try path("/late.txt"), bytes: Array("old".utf8)))
        let file = try await session.perform(OpenForUpdate(try path("/late.txt"), truncating: true))
        try write("written, never sent", at: 0, to: file)
        file.close()
        // The copy and its record stay, as a kill would leave them.
        #expect(copies.count == 2)
        #expect(try await text("/late.txt") == "old")
        let sent = try await finishing()
        let late = try path("/late.txt")
        #expect(sent.count == 1 && (try? sent[0].get().path) == late)
        #expect(try await text("/late.txt") == "written, never sent")
        #expect(try await service.versions(of: try path("/late.txt")).map(\.size) == [3])
        #expect(copies.isEmpty)
        // Nothing more to send.
        #expect(try await session.perform(FinishPendingSaves()).isEmpty)
    }

    @Test func aCopyStillOpenIsLeftToItsOwnerAndADiscardedOneIsDropped() async throws {
        let open = try await session.perform(OpenForUpdate(try path("/open.txt"), creating: true))
        try write("still being written", at: 0, to: open)
        // Another finishing (another mount, or this one at its start) leaves an open copy be.
        #expect(try await session.perform(FinishPendingSaves()).isEmpty)
        #expect(copies.count == 2)
        try write("still being written, and more", at: 0, to: open)
        _ = try await session.perform(SaveUpdatedFile(open))
        open.close()
        #expect(try await text("/open.txt") == "still being written, and more")
        // A file whose making failed: nothing of it reaches the storage, now or later.
        let failed = try await session.perform(OpenForUpdate(try path("/failed.txt"), creating: true))
        try write("never", at: 0, to: failed)
        failed.discard()
        #expect(copies.isEmpty)
        #expect(try await session.perform(FinishPendingSaves()).isEmpty)
        #expect(try await text("/failed.txt") == nil)
    }

    @Test func aCopySentButNotCrossedOffIsNotSentTwice() async throws {
        let file = try await session.perform(OpenForUpdate(try path("/twice.txt"), creating: true))
        try write("once", at: 0, to: file)
        _ = try await session.perform(SaveUpdatedFile(file))
        // As if killed between the send and the crossing off: the record is back.
        try write("once", at: 0, to: file)
        file.close()
        #expect(copies.count == 2)
        let sent = try await finishing()
        #expect(sent.count == 1)
        #expect(try await memory.contentsOfFolder(at: try path("/")).map(\.name) == ["twice.txt"])
        #expect(copies.isEmpty)
    }
}
