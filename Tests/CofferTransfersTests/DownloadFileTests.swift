import CCofferSystem
import CofferCore
@testable import CofferTransfers
import CofferTestSupport
import FileService
import Foundation
import Testing

/// Downloads as the service performs them: into the cache first, then into `files:`.
@Suite(.serialized, .ownsProcesses) struct DownloadFileTests {
    let directory = TemporaryDirectory("download-file")
    let server: TransferServer
    let service: FileService
    let session: Session
    var store: TransferStore { TransferStore(folder: directory.url("c/Library/Application Support/AppData/Transfers")) }
    var cache: [String] { directory.names("c/Library/Caches/Downloading").filter { $0.hasSuffix(".download") } }

    init() async throws {
        server = try TransferServer()
        service = try FileService.standard(container: try await Container.open(at: directory.url("c")))
        session = try service.openSession(SessionOptions(frontEnd: "test"))
    }

    @Test func aDownloadAppearsInDownloadUnderTheServersNameAndKeepsBoth() async throws {
        let node = try await session.perform(DownloadFile(server.url("/named"), store: store))
        #expect(node.path.description == "files:/Download/年度报告.txt")
        #expect(directory.contents("c/Documents/UserFiles/Download/年度报告.txt") == "named content")
        // Placed by a rename: the origin the browser convention asks for is on the file itself.
        let fd = open(directory.url("c/Documents/UserFiles/Download/年度报告.txt"), O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        var origin = [UInt8](repeating: 0, count: 512)
        let length = coffer_fgetxattr(fd, "user.xdg.origin.url", &origin, origin.count)
        #expect(length > 0 && String(decoding: origin.prefix(max(0, length)), as: UTF8.self) == server.url("/named"))
        let again = try await session.perform(DownloadFile(server.url("/named"), store: store))
        #expect(again.path.description == "files:/Download/年度报告 (2).txt")
        let chosen = try await session.perform(DownloadFile(server.url("/data/x?size=10"), into: .root(), as: "../../chosen.bin",
                                                            store: store))
        #expect(chosen.path.description == "files:/_.._chosen.bin")
        // Nothing is left in the cache; the store remembers each as done, with where it went.
        #expect(cache.isEmpty)
        let records = store.all()
        #expect(records.count == 3 && records.allSatisfy { $0.state == .done })
        #expect(Set(records.compactMap(\.result)) == ["files:/Download/年度报告.txt", "files:/Download/年度报告 (2).txt",
                                                      "files:/_.._chosen.bin"])
        let audit = directory.contents("c/Library/Application Support/AppData/logs/audit.jsonl") ?? ""
        #expect(audit.contains(#""method":"download""#))
    }

    @Test func aFailedDownloadLeavesNothingInFilesAndSaysWhy() async throws {
        await #expect(throws: CofferError.self) { try await session.perform(DownloadFile(server.url("/missing"), store: store)) }
        #expect(directory.names("c/Documents/UserFiles/Download").isEmpty)
        let failed = try #require(store.all().first)
        #expect(failed.state == .failed && failed.status == 404 && failed.failure?.contains("404") == true)
        await #expect(throws: CofferError.self) { try await session.perform(DownloadFile("ftp://example.com/a", store: store)) }
    }

    @Test func aCancelledDownloadIsPausedAndResumesToTheSameFile() async throws {
        let size = 32 << 20
        let engine = { var engine = DownloadEngine(); engine.checkpointBytes = 1 << 20; return engine }()
        let url = server.url("/slow/paused?size=\(size)")
        let (session, store) = (self.session, self.store)
        let download = Task { try await session.perform(DownloadFile(url, store: store, engine: engine)) }
        // Cancelled once some of it is on disk.
        var waited = 0
        while (store.all().first?.received ?? 0) < 1 << 20, waited < 2000 {
            try await Task.sleep(for: .milliseconds(5))
            waited += 1
        }
        download.cancel()
        await #expect(throws: (any Error).self) { try await download.value }
        let paused = try #require(store.all().first)
        #expect(paused.state == .paused && paused.received > 0)
        #expect(directory.names("c/Documents/UserFiles/Download").isEmpty)
        #expect(cache == [paused.id + ".download"])
        let node = try await session.perform(DownloadFile(url, store: store, engine: engine, resuming: paused.id))
        #expect(node.path.description == "files:/Download/paused")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.url("c/Documents/UserFiles/Download/paused")))
        #expect(Array(bytes) == TransferServer.payload("paused", size: size))
        #expect(try server.rangesSeen().last == "bytes=\(paused.received)-")
        #expect(cache.isEmpty)
    }

    @Test func aCompleteDownloadThatCouldNotBePlacedIsPlacedLaterWithoutFetchingAgain() async throws {
        let folder = try VirtualPath(parsing: "/Later")
        _ = try await session.perform(CreateFolder(folder))
        // The folder is there when the download starts (it is checked first), and gone by its end.
        let size = 4 << 20
        let (session, store) = (self.session, self.store)
        let download = Task { try await session.perform(DownloadFile(server.url("/slow/later?size=\(size)"), into: folder, store: store)) }
        var started = false
        for _ in 0..<1000 where !started {
            started = !cache.isEmpty
            if !started { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(started)
        try FileManager.default.removeItem(atPath: directory.url("c/Documents/UserFiles/Later"))
        await #expect(throws: CofferError.self) { try await download.value }
        let failed = try #require(store.all().first)
        #expect(failed.state == .failed && failed.received == Int64(size) && failed.failure != nil)
        #expect(cache == [failed.id + ".download"])  // the data stays
        let requests = try server.rangesSeen().count
        _ = try await session.perform(CreateFolder(folder))
        let node = try await session.perform(DownloadFile(failed.url, store: store, resuming: failed.id))
        #expect(node.path.description == "files:/Later/later")
        let placed = try FileManager.default.attributesOfItem(atPath: directory.url("c/Documents/UserFiles/Later/later"))
        #expect(placed[.size] as? Int == size)
        #expect(try server.rangesSeen().count == requests + 1)  // nothing fetched again (one more: the first /stats)
        #expect(cache.isEmpty && store.all().map(\.state) == [.done])
    }
}
