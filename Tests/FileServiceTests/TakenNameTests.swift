import CofferBackends
import CofferCore
import CofferInMemory
import CofferTestSupport
import FileService
import Foundation
import Synchronization
import Testing

/// A display that keeps the most bytes any attempt reported done.
private final class BytesDisplay: ProgressDisplay {
    let mostBytes = Mutex<Int64>(0)
    func begin() -> ProgressReporter {
        ProgressReporter { progress in self.mostBytes.withLock { $0 = max($0, progress.completedBytes) } }
    }
    func end() {}
}

/// A taken name is found before anything is sent (issue 48: on a bucket, the conflict
/// question came after 97 % of an upload). The in-memory backend, like S3, refuses a taken
/// name only when the upload commits: without the look first, every byte would be sent.
struct TakenNameTests {
    let directory = TemporaryDirectory("taken-name")
    let memory = InMemoryBackend()
    let session: Session

    init() async throws {
        directory.make(["files/big.bin": String(repeating: "x", count: 4 << 20)])
        let service = FileService(mounts: [Mount(name: "files", backend: try LocalSandboxBackend(rootPath: directory.url("files"))),
                                           Mount(name: "memory", backend: memory)])
        session = try service.openSession(SessionOptions(frontEnd: "test"))
        _ = try await session.perform(WriteFile(try VirtualPath(parsing: "memory:/big.bin"), bytes: Array("kept".utf8)))
    }

    @Test func aTakenNameIsRefusedBeforeAnyByteIsSent() async throws {
        let display = BytesDisplay()
        let refused = await thrownError(of: try await session.perform(
            CopyItem(try VirtualPath(parsing: "files:/big.bin"), to: .named(try VirtualPath(parsing: "memory:/big.bin")),
                     conflict: .fail),
            progress: display))
        #expect(refused?.kind == .fileExists)
        #expect(display.mostBytes.withLock { $0 } == 0)
        #expect(try await memory.node(at: try VirtualPath(parsing: "/big.bin")).size == 4)
        await session.close()
    }
}
