import CofferBackends
import CofferCore
import CofferTestSupport
import FileService
import Foundation
import Synchronization
import Testing

/// The engine names no feature: a service has the features it is given, answers the
/// operations of the others `unsupported`, tells the features that watch moves, and keeps
/// each feature's upkeep going while someone holds it.
struct ServiceFeatureTests {
    let directory = TemporaryDirectory("features")

    /// Upkeep that counts its starts and stops.
    final class Counting: ServiceFeature {
        let started = Atomic<Int>(0)
        let stopped = Atomic<Int>(0)
        func keepUp(_ service: FileService) async {
            started.add(1, ordering: .relaxed)
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
        }
        func stopKeepingUp() { stopped.add(1, ordering: .relaxed) }
    }

    @Test func aServiceHasOnlyTheFeaturesItIsGiven() async throws {
        directory.make(["files/Docs/a.txt": "a", "app/": ""])
        let root = directory.url("files"), appData = directory.url("app")
        // As Documentation/GettingStarted.md shows it.
        let service = FileService(mounts: [Mount(name: "files", backend: try LocalSandboxBackend(rootPath: root))],
                                  features: [Favourites(path: appData + "/favourites.json")])
        #expect(service.feature(Favourites.self) != nil && service.feature(ShareRegistry.self) == nil)
        let session = try service.openSession(SessionOptions(frontEnd: "test"))
        let docs = try VirtualPath(parsing: "files:/Docs")
        _ = try await session.perform(AddFavourite(.item(docs)))
        let shared = await #expect(throws: CofferError.self) { try await session.perform(CreateShare(docs)) }
        #expect(shared?.kind == .unsupported)
        #expect(try await session.perform(ListRecentFiles()).isEmpty)
        // A favourite follows a move the engine makes (``ItemMoveObserver``).
        _ = try await session.perform(RenameItem(docs, to: "Papers"))
        #expect(try await session.perform(ListFavourites()).map(\.favourite.location) == ["files:/Papers"])
        await session.close()
    }

    @Test func upkeepRunsWhileTheBackgroundWorkIsHeldAndStopsWithTheLastHold() async throws {
        let counting = Counting()
        let service = FileService(mounts: [], features: [counting])
        service.retainBackgroundWork()
        service.retainBackgroundWork()
        let deadline = ContinuousClock.now + .seconds(10)
        while counting.started.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(counting.started.load(ordering: .relaxed) == 1, "started once for two holds")
        await service.releaseBackgroundWork()
        #expect(counting.stopped.load(ordering: .relaxed) == 0)
        await service.releaseBackgroundWork()
        #expect(counting.stopped.load(ordering: .relaxed) == 1)
    }
}
