import CofferBackends
import CofferCore
import CofferTestSupport
@_spi(Engine) import FileService
import Foundation
import Testing

/// Start-up recovery: what a killed process left under way is settled by the next opening,
/// from its journal, without walking the tree; a running process's work is left alone.
struct RecoveryTests {
    let directory = TemporaryDirectory("recovery")

    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }
    func trash(_ relative: String) -> String { "c/Library/Trash/" + relative }
    func journal(_ name: String) -> String { "c/Library/Application Support/AppData/Journal/" + name }

    /// A journal as a process that is gone left it.
    func leaveJournal(owner: String, folders: [[String]], trashEntries: [String], below container: Container) throws {
        var lines = folders.map { #"{"root":\#(json(container.userFilesPath)),"folder":\#(json($0))}"# }
        lines += trashEntries.map { #"{"root":\#(json(container.trashPath)),"trashEntry":\#(json($0))}"# }
        // The crash may cut the last line short: it is skipped.
        directory.make([journal(owner + ".journal"): lines.joined(separator: "\n") + "\n{\"root\":\"/tm"])
    }

    func json(_ value: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]), as: UTF8.self)
    }

    @Test func aDeadProcesssPartialsAndHalfDoneTrashEntriesAreSettled() async throws {
        let first = try await Container.open(at: directory.url("c"))
        directory.make([
            user("Docs/.coffer-partial-deadbeef-1"): "half a file",
            user("Docs/.coffer-partial-deadbeef-2/inner/x.txt"): "half a folder",
            user("Docs/.coffer-partial-0badcafe-1"): "another process's",
            user("Docs/kept.txt"): "mine",
            user(".coffer-partial-deadbeef-3"): "at the root, which the journal names too",
            trash("info/.coffer-partial-deadbeef-4"): "[Trash Info]\nPath=/x\n",
            trash("info/gone.txt.trashinfo"): "[Trash Info]\nPath=/x/gone.txt\n",
            trash("info/kept.txt.trashinfo"): "[Trash Info]\nPath=/x/kept.txt\n",
            trash("files/kept.txt"): "trashed",
        ])
        try leaveJournal(owner: "deadbeef", folders: [["Docs"], [], ["Gone", "Away"]], trashEntries: ["gone.txt", "kept.txt"],
                         below: first)
        // The trash's own folder is noted under the trash's root.
        let trashLine = #"{"root":\#(json(first.trashPath)),"folder":["info"]}"#
        let text = directory.contents(journal("deadbeef.journal"))!
        directory.make([journal("deadbeef.journal"): trashLine + "\n" + text])

        let reopened = try await Container.open(at: directory.url("c"))
        #expect(reopened.recovery.journals == 1)
        #expect(reopened.recovery.partials == 4)
        #expect(reopened.recovery.trashEntries == 1)
        #expect(directory.names(user("Docs")) == [".coffer-partial-0badcafe-1", "kept.txt"])
        #expect(!directory.exists(user(".coffer-partial-deadbeef-3")))
        #expect(directory.names(trash("info")) == ["kept.txt.trashinfo"])
        #expect(directory.contents(trash("files/kept.txt")) == "trashed")
        #expect(!directory.exists(journal("deadbeef.journal")))
    }

    @Test func aLiveProcesssJournalAndPartialsAreLeftAlone() async throws {
        let first = try await Container.open(at: directory.url("c"))
        directory.make([user(".coffer-partial-0feedbac-1"): "being written"])
        try leaveJournal(owner: "0feedbac", folders: [[]], trashEntries: [], below: first)
        // Held as its owner holds it.
        let fd = open(directory.url(journal("0feedbac.journal")), O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        let reopened = try await Container.open(at: directory.url("c"))
        #expect(reopened.recovery == OperationJournal.Recovery())
        #expect(directory.exists(user(".coffer-partial-0feedbac-1")))
        #expect(directory.exists(journal("0feedbac.journal")))
    }

    /// Partials in the trash's own folders never outlast their process, whatever its journal
    /// said (issue 39: a kill -9 during `rm` of 500 files left some in `info/`): a dead
    /// process's go at once, one without any journal once a minute old; a live one's stay.
    @Test func theTrashKeepsNoPartialOfAProcessThatIsGone() async throws {
        let first = try await Container.open(at: directory.url("c"))
        directory.make([
            trash("info/.coffer-partial-deadbeef-7"): "[Trash Info]\nPath=/x\n",
            trash("files/.coffer-partial-deadbeef-8"): "half moved",
            trash("info/.coffer-partial-0ddba11f-1"): "no journal, old",
            trash("info/.coffer-partial-0ddba11e-1"): "no journal, just made",
            trash("info/.coffer-partial-0feedbac-2"): "a live process's",
        ])
        let old = Date().addingTimeInterval(-600)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: directory.url(trash("info/.coffer-partial-0ddba11f-1")))
        // The dead process's journal says nothing of the trash; the live one's is held.
        try leaveJournal(owner: "deadbeef", folders: [["Docs"]], trashEntries: [], below: first)
        try leaveJournal(owner: "0feedbac", folders: [], trashEntries: [], below: first)
        let fd = open(directory.url(journal("0feedbac.journal")), O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        let reopened = try await Container.open(at: directory.url("c"))
        #expect(directory.names(trash("info")) == [".coffer-partial-0ddba11e-1", ".coffer-partial-0feedbac-2"])
        #expect(directory.names(trash("files")).isEmpty)
        #expect(reopened.recovery.partials == 3)
    }

    @Test func thisProcessNotesEachFolderOnceAndKeepsItsJournalLocked() async throws {
        let container = try await Container.open(at: directory.url("c"))
        let service = try FileService.standard(container: container)
        let session = try service.openSession(SessionOptions(frontEnd: "test"))
        for index in 0..<5 {
            _ = try await session.perform(WriteFile(try VirtualPath(parsing: "/Download/\(index).txt"), bytes: [1]))
        }
        _ = try await session.perform(TrashItems([try VirtualPath(parsing: "/Download/0.txt")]))
        let text = try #require(directory.contents(journal(PartialName.owner + ".journal")))
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0.contains(#""folder":["Download"]"#) }.count == 1)
        #expect(lines.contains { $0.contains(#""trashEntry":"0.txt""#) })
        // Another opening, as another process's start would: this journal is alive.
        let reopened = try await Container.open(at: directory.url("c"))
        #expect(reopened.recovery.journals == 0)
        #expect(directory.exists(journal(PartialName.owner + ".journal")))
        await session.close()
    }

    @Test func emptyInformationFilesLeftByAnotherToolAreRepairedOrRemovedOnceAbandoned() async throws {
        let container = try await Container.open(at: directory.url("c"))
        let service = try FileService.standard(container: container)
        directory.make([trash("info/lost.txt.trashinfo"): "", trash("files/lost.txt"): "content",
                        trash("info/nothing.txt.trashinfo"): "", trash("info/young.txt.trashinfo"): ""])
        let old = Date().addingTimeInterval(-3600)
        for name in ["lost.txt", "nothing.txt"] {
            try FileManager.default.setAttributes([.modificationDate: old],
                                                  ofItemAtPath: directory.url(trash("info/\(name).trashinfo")))
        }
        let listing = try await service.trashItems()
        // An item whose information was never written is listed, to go back to the root of files:.
        let lost = try #require(listing.items.first { $0.id == "lost.txt" })
        #expect(lost.originalPath == (try VirtualPath(parsing: "files:/lost.txt")))
        let repaired = try #require(directory.contents(trash("info/lost.txt.trashinfo")))
        #expect(repaired.hasPrefix("[Trash Info]\nPath=/") && repaired.contains("DeletionDate="))
        // Empty and without an item: removed; empty but young (being written now): left.
        #expect(!directory.exists(trash("info/nothing.txt.trashinfo")))
        #expect(directory.contents(trash("info/young.txt.trashinfo")) == "")
        #expect(directory.names(trash("info")).allSatisfy { !$0.hasPrefix(".coffer-partial-") })
        _ = try await service.restore("lost.txt", conflict: .fail)
        #expect(directory.contents(user("lost.txt")) == "content")
    }
}
