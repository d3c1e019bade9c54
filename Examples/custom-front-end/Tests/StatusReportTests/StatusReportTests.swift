import CofferApp
import CofferCore
import CofferInMemory
import FileService
import Foundation
import StatusReport
import Testing
import custom_front_end_example

/// The `status` front end: its report, read in a session, and its options through the
/// application's command line.
struct StatusReportTests {
    static func temporaryFolder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("status-report-\(UUID().uuidString)").path
    }

    @Test func theReportCountsItemsAndSpaceAndTheTrash() async throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let container = try await Container.open(at: folder)
        let memory = InMemoryBackend()
        let service = try FileService.standard(container: container, extraMounts: [Mount(name: "scratch", backend: memory)])
        let session = try service.openSession(SessionOptions(frontEnd: "status"))
        _ = try await session.perform(CreateFolder(try VirtualPath(parsing: "scratch:/报告")))
        _ = try await session.perform(WriteFile(try VirtualPath(parsing: "scratch:/notes.txt"), bytes: Array("hello".utf8)))
        _ = try await session.perform(CreateFolder(try VirtualPath(parsing: "/to trash")))
        _ = try await session.perform(TrashItems([try VirtualPath(parsing: "/to trash")]))

        let report = try await StatusReport.make(in: session)
        await session.close()
        let scratch = try #require(report.mounts.first { $0.name == "scratch" })
        #expect(scratch.items == 2)
        #expect(scratch.space == StorageSpace(usedBytes: 5, totalBytes: nil))
        // The local mount reports its disk (LocalSandboxBackend adopts SpaceReportingBackend).
        #expect(report.mounts.first { $0.name == "files" }?.space?.availableBytes != nil)
        #expect(report.trashed == 1)
        #expect(report.lines(in: .english).contains { $0.hasPrefix("scratch:") && $0.contains("2 items") })
        #expect(report.lines(in: .simplifiedChinese).last == "废纸篓中（所有挂载点）：1 项")
        #expect(report.json().contains("\"name\":\"scratch\""))
    }

    @Test func statusTakesOnlyJSON() throws {
        #expect(try Status(arguments: ["--json"]).json)
        #expect(try !Status(arguments: []).json)
        let error = #expect(throws: CofferError.self) { try Status(arguments: ["--verbose"]) }
        #expect(error?.kind == .invalidArgument)
    }

    @Test @MainActor func aBadOptionStopsTheProgramWithStatusTwo() async {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let application = CofferApplication(name: "custom-front-end-example", frontEnds: [Status.self])
        #expect(await application.run(arguments: ["--container", folder, "status", "--verbose"], environment: [:]) == 2)
        #expect(await application.run(arguments: ["status", "--json", "--container", folder], environment: [:]) == 0)
    }
}
