import CofferBackends
import CofferCore
import CofferTestSupport
import FileService
import Foundation
import Testing

/// Coffer's partials are recognised by their exact shape, which no user can give a name;
/// a user's own file that merely starts like one is an ordinary file everywhere.
struct PartialNameTests {
    let fixture: HostFixture
    var directory: TemporaryDirectory { fixture.directory }
    var session: Session { fixture.session }

    init() async throws { fixture = try await HostFixture("partials") }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }
    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }

    @Test func theShapeIsExact() {
        let made = PartialName.make()
        #expect(PartialName.isPartial(made))
        #expect(PartialName.ownerOf(made).map(String.init) == PartialName.owner)
        #expect(PartialName.make() != made)
        // What earlier versions made (eight and four digits) is a partial too.
        #expect(PartialName.isPartial(".coffer-partial-1a2b3c4d-5e6f"))
        for name in [".coffer-partial-", ".coffer-partial-notes.txt", ".coffer-partial-1A2B3C4D-5", ".coffer-partial-1a2b3c4d-",
                     ".coffer-partial-1a2b3c4d_5", ".coffer-partial-1a2b3c4d-5.txt", "coffer-partial-1a2b3c4d-5",
                     ".coffer-partial-1a2b3c4d-" + String(repeating: "a", count: 17)] {
            #expect(!PartialName.isPartial(name), "\(name)")
        }
    }

    @Test func noEntryPointAcceptsThatShape() async throws {
        let reserved = ".coffer-partial-0badcafe-1"
        func expectRefused(_ body: () async throws -> Void) async {
            do {
                try await body()
                Issue.record("accepted")
            } catch let error as CofferError {
                #expect(error.kind == .invalidName && error.detail == "reserved", "\(error)")
            } catch {
                Issue.record("\(error)")
            }
        }
        await expectRefused { _ = try await session.perform(WriteFile(try path("/" + reserved), bytes: [1])) }
        await expectRefused { _ = try await session.perform(CreateFolder(try path("/Docs/" + reserved))) }
        directory.make([user("a.txt"): "a"])
        await expectRefused { _ = try await session.perform(RenameItem(try path("/a.txt"), to: reserved)) }
        await expectRefused { _ = try await session.perform(CopyItem(try path("/a.txt"), to: .named(try path("/" + reserved)))) }
        // A host file of that name is not imported, and says why.
        directory.make(["host/" + reserved: "x"])
        let results = try await session.perform(ImportItems([directory.url("host/" + reserved)]))
        if case .failure(let error) = results[0].outcome { #expect(error.detail == "reserved") } else { Issue.record("imported") }
        #expect(directory.names(user("Import")).isEmpty)
        let message = "\(CofferError(.invalidName, detail: "reserved").userMessage(in: .english))"
        #expect(message.contains(".coffer-partial-"))
    }

    @Test func insideAnImportedFolderSuchANameIsReportedNotSilentlyLost() async throws {
        directory.make(["host/Album/.coffer-partial-0badcafe-2": "x", "host/Album/a.txt": "a"])
        let results = try await session.perform(ImportItems([directory.url("host/Album")]))
        let skipped = results[0].skipped
        #expect(skipped.count == 1 && skipped.first?.hostPath.hasSuffix(".coffer-partial-0badcafe-2") == true)
        #expect(skipped.first?.error.detail == "reserved")
        #expect(directory.contents(user("Import/Album/a.txt")) == "a")
    }

    @Test func aUsersFileThatOnlyStartsLikeOneIsListedCopiedAndExported() async throws {
        let name = ".coffer-partial-notes.txt"
        directory.make([user("Docs/"): ""])
        _ = try await session.perform(WriteFile(try path("/Docs/" + name), bytes: Array("mine".utf8)))
        let listed = try await session.perform(ListFolder(try path("/Docs"), options: ListOptions(includeHidden: true)))
        #expect(listed.items.map(\.name) == [name])
        _ = try await session.perform(CopyItem(try path("/Docs"), to: .named(try path("/Copy"))))
        #expect(directory.contents(user("Copy/" + name)) == "mine")
        _ = try await session.perform(ExportItem(try path("/Docs"), toHostFolder: directory.url("host")))
        #expect(directory.contents("host/Docs/" + name) == "mine")
    }
}
