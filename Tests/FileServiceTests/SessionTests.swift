import CofferCore
import CofferSearch
import CofferTestSupport
@testable import FileService
import Foundation
import Synchronization
import Testing

/// Counts the attempts a display was asked to show.
final class CountingDisplay: ProgressDisplay {
    let shown = Mutex((begun: 0, ended: 0))
    func begin() -> ProgressReporter {
        shown.withLock { $0.begun += 1 }
        return ProgressReporter()
    }
    func end() { shown.withLock { $0.ended += 1 } }
}

/// What a session owns: the audit entry, the conflict question, its work, its watches, and
/// the service's background work while it stays.
struct SessionTests {
    let directory = TemporaryDirectory("session")
    let service: FileService

    init() async throws {
        service = try FileService.standard(container: try await Container.open(at: directory.url("c")))
    }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }
    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }

    /// The audit log's entries so far.
    var audited: [[String: String]] {
        (directory.contents("c/Library/Application Support/AppData/logs/audit.jsonl") ?? "").split(separator: "\n").compactMap { line in
            guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return ["frontEnd": entry["frontEnd"] as? String ?? "", "method": entry["method"] as? String ?? "",
                    "outcome": entry["outcome"] as? String ?? "",
                    "paths": (entry["paths"] as? [String] ?? []).joined(separator: " | ")]
        }
    }

    @Test func changesAreAuditedOnceEachReadsNeverAndFailuresToo() async throws {
        directory.make([user("a.txt"): "a", user("b.txt"): "b"])
        let session = try service.openSession(SessionOptions(frontEnd: "tester"))
        _ = try await session.perform(StatItem(try path("/a.txt")))
        _ = try await session.perform(ListFolder(.root()))
        _ = try await session.perform(CopyItem(try path("/a.txt"), to: .named(try path("/c.txt"))))
        _ = await thrownError(of: try await session.perform(RenameItem(try path("/b.txt"), to: "c.txt")))
        // An operation that cannot even be made (its path climbs out) is recorded, with no path.
        _ = await thrownError(of: try await session.perform(CreateFolder(try path("../../etc"))))
        // Several items at once: one entry each.
        _ = try await session.perform(TrashItems([try path("/a.txt"), try path("/missing.txt")]))
        #expect(audited == [
            ["frontEnd": "tester", "method": "copy", "outcome": "ok", "paths": "files:/a.txt | files:/c.txt"],
            ["frontEnd": "tester", "method": "rename", "outcome": "fileExists", "paths": "files:/b.txt | files:/c.txt"],
            ["frontEnd": "tester", "method": "createFolder", "outcome": "outsideSandbox", "paths": ""],
            ["frontEnd": "tester", "method": "trash", "outcome": "ok", "paths": "files:/a.txt"],
            ["frontEnd": "tester", "method": "trash", "outcome": "noSuchFile", "paths": "files:/missing.txt"],
        ])
        await session.close()
    }

    @Test func askingTriesThenAsksAndEachAttemptHasItsOwnProgress() async throws {
        directory.make([user("a.txt"): "new", user("Docs/a.txt"): "old"])
        let session = try service.openSession(SessionOptions(frontEnd: "tester"))
        // No one to ask: as .fail.
        let unasked = await thrownError(of: try await session.perform(CopyItem(try path("/a.txt"), to: .into(try path("/Docs")),
                                                                               conflict: .ask)))
        #expect(unasked?.kind == .fileExists)
        let asked = Asked()
        session.conflictQuestion = { conflict in
            asked.paths.withLock { $0.append(conflict.destination) }
            return .keepBoth
        }
        let display = CountingDisplay()
        let copied = try await session.perform(CopyItem(try path("/a.txt"), to: .into(try path("/Docs")), conflict: .ask),
                                               progress: display)
        #expect(copied.path == (try path("/Docs/a (2).txt")))
        #expect(asked.paths.withLock { $0 } == [try path("/Docs/a.txt")])
        #expect(display.shown.withLock { $0 } == (2, 2))  // the refused attempt, then the one that copied
        // No answer cancels, and nothing changes.
        session.conflictQuestion = { _ in nil }
        let cancelled = await thrownError(of: try await session.perform(MoveItem(try path("/a.txt"), to: .into(try path("/Docs")),
                                                                                 conflict: .ask)))
        #expect(cancelled?.kind == .cancelled)
        #expect(directory.contents(user("a.txt")) == "new")
        #expect(directory.contents(user("Docs/a.txt")) == "old")
        await session.close()
    }

    @Test func closingCancelsWorkStopsWatchesAndRefusesLateWork() async throws {
        let session = try service.openSession(SessionOptions(frontEnd: "tester"))
        let heard = Mutex(0)
        _ = try await session.watch(.root()) { _, changes in heard.withLock { $0 += changes.count } }
        let stopped = Mutex(false)
        let work = session.start(ActivityKey("sleeper")) {
            do { try await Task.sleep(for: .seconds(60)) } catch { stopped.withLock { $0 = true } }
        }
        await session.close()
        await work.value
        #expect(stopped.withLock { $0 })
        // The watch is gone: changes made now are not heard.
        directory.make([user("after.txt"): "x"])
        try await Task.sleep(for: .milliseconds(400))
        #expect(heard.withLock { $0 } == 0)
        // Work started after close starts cancelled.
        let late = session.start { Task.isCancelled }
        #expect(await late.value)
    }

    @Test func workCanBeCancelledByItsKey() async throws {
        let session = try service.openSession(SessionOptions(frontEnd: "tester"))
        let first = session.start(ActivityKey("a")) { (try? await Task.sleep(for: .seconds(60))) == nil }
        let second = session.start(ActivityKey("b")) { (try? await Task.sleep(for: .milliseconds(300))) == nil }
        session.cancel(ActivityKey("a"))
        #expect(await first.value)  // cancelled
        #expect(await !second.value)  // ran to its end
        await session.close()
    }

    @Test func longLivedSessionsKeepTheIndexLiveWhileOneIsOpen() async throws {
        let index = try #require(service.searchIndex)
        let short = try service.openSession(SessionOptions(frontEnd: "tester"))
        #expect(!index.isLive)
        let first = try service.openSession(SessionOptions(frontEnd: "tester", isLongLived: true))
        let second = try service.openSession(SessionOptions(frontEnd: "tester", isLongLived: true))
        #expect(await eventually { index.isLive })
        await first.close()
        #expect(index.isLive)
        await second.close()
        #expect(!index.isLive)
        await short.close()
    }

    @Test func hostAccessIsTheSessionsAndNeverTheContainer() async throws {
        directory.make(["host/a.txt": "a"])
        let anywhere = try service.openSession(SessionOptions(frontEnd: "tester", hostAccess: .anywhere))
        let nowhere = try service.openSession(SessionOptions(frontEnd: "tester"))
        #expect(anywhere.allowedHostFolders == nil)
        #expect(nowhere.allowedHostFolders == [])
        #expect(try await anywhere.perform(ImportItems([directory.url("host/a.txt")]))[0].outcome.get().name == "a.txt")
        let refused = try await nowhere.perform(ImportItems([directory.url("host/a.txt")]))
        if case .failure(let error) = refused[0].outcome { #expect(error.kind == .hostAccessDenied) } else { Issue.record("imported") }
        let inside = try await anywhere.perform(ImportItems([directory.url("c/Library")]))
        if case .failure(let error) = inside[0].outcome { #expect(error.kind == .hostAccessDenied) } else { Issue.record("imported") }
        #expect(throws: CofferError.self) {
            _ = try service.openSession(SessionOptions(frontEnd: "tester", hostAccess: .only([directory.url("missing")])))
        }
    }

    /// One pace for every progress display: ten reports a second at most, the last always.
    @Test func progressIsPacedAlikeForEveryDisplay() {
        var pace = ProgressPace()
        let start = ContinuousClock.now
        var shown: [Bool] = []
        for (after, complete) in [(0, false), (40, false), (60, true), (100, false), (160, false)] {
            shown.append(pace.admits(at: start + .milliseconds(after), complete: complete))
        }
        #expect(shown == [true, false, true, false, true])
        pace.reset()
        let again = pace.admits(at: start + .milliseconds(170))
        #expect(again)
    }
}
