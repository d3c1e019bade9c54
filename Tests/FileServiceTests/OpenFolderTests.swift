import CofferBackends
import CofferCore
import CofferInMemory
import CofferTestSupport
import FileService
import Foundation
import Testing

/// `OpenFolder` reads a folder a batch at a time: every entry once, Coffer's partial files never,
/// again from the start after a rewind, and a clear error once closed; storage without folders
/// to read (memory, S3) gives its listing the same way.
struct OpenFolderTests {
    let directory = TemporaryDirectory("open-folder")
    let service: FileService
    let session: Session
    let names = Set((0..<1_000).map { "entry \($0) 条目" })

    init() async throws {
        directory.make(["files/Big/.coffer-partial-0000abcd-1f": "half"])
        for name in names { FileManager.default.createFile(atPath: directory.url("files/Big/" + name), contents: nil) }
        let memory = InMemoryBackend()
        service = FileService(mounts: [Mount(name: "files", backend: try LocalSandboxBackend(rootPath: directory.url("files"))),
                                       Mount(name: "memory", backend: memory)])
        session = try service.openSession(SessionOptions(frontEnd: "test"))
        _ = try await session.perform(CreateFolder(try VirtualPath(parsing: "memory:/Box")))
        for index in 0..<10 {
            _ = try await session.perform(WriteFile(try VirtualPath(parsing: "memory:/Box/m\(index).txt"), bytes: [1]))
        }
    }

    /// Every entry `folder` gives, `batch` at a time.
    func readAll(_ folder: OpenedFolder, batch: Int) async throws -> [String] {
        var read: [String] = []
        while true {
            let more = try await folder.next(batch)
            read += more.map(\.name)
            if more.count < batch { return read }
        }
    }

    @Test func aLocalFolderIsReadABatchAtATimeAndAgainAfterARewind() async throws {
        let folder = try await session.perform(OpenFolder(try VirtualPath(parsing: "/Big")))
        let first = try await folder.next(100)
        #expect(first.count == 100)
        let rest = try await readAll(folder, batch: 100)
        #expect(Set(first.map(\.name) + rest) == names && first.count + rest.count == names.count)
        #expect(try await folder.next(100).isEmpty)
        // A file made after the start shows once the folder is read again from it.
        FileManager.default.createFile(atPath: directory.url("files/Big/late.txt"), contents: nil)
        folder.rewind()
        let again = try await readAll(folder, batch: 333)
        #expect(Set(again) == names.union(["late.txt"]))
        folder.close()
        await #expect(throws: CofferError.self) { try await folder.next(1) }
    }

    @Test func otherStorageGivesItsListingTheSameWay() async throws {
        let folder = try await session.perform(OpenFolder(try VirtualPath(parsing: "memory:/Box")))
        let read = try await readAll(folder, batch: 3)
        #expect(Set(read) == Set((0..<10).map { "m\($0).txt" }))
        folder.rewind()
        let items = try await folder.next(100)
        #expect(items.count == 10)
        // The listing's items come with each entry.
        #expect(items.allSatisfy { $0.node?.size == 1 && $0.node?.name == $0.name })
        folder.close()
        await #expect(throws: CofferError.self) { try await folder.next(1) }
    }

    @Test func aFileOrNothingIsRefused() async throws {
        let missing = await thrownError(of: try await session.perform(OpenFolder(try VirtualPath(parsing: "/Nothing"))))
        #expect(missing?.kind == .noSuchFile)
        _ = try await session.perform(WriteFile(try VirtualPath(parsing: "/plain.txt"), bytes: [1]))
        let file = await thrownError(of: try await session.perform(OpenFolder(try VirtualPath(parsing: "/plain.txt"))))
        #expect(file?.kind == .notADirectory)
    }
}
