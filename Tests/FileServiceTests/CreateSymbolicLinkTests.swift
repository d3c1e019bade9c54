import CofferBackends
import CofferCore
import CofferInMemory
import CofferTestSupport
import FileService
import Foundation
import Testing

/// `CreateSymbolicLink` makes only links that stay inside their mount, never over anything, and
/// only where the storage keeps links.
struct CreateSymbolicLinkTests {
    let directory = TemporaryDirectory("symbolic-links")
    let session: Session

    init() throws {
        directory.make(["files/Docs/plan.txt": "the plan"])
        let service = FileService(mounts: [Mount(name: "files", backend: try LocalSandboxBackend(rootPath: directory.url("files"))),
                                           Mount(name: "memory", backend: InMemoryBackend())])
        session = try service.openSession(SessionOptions(frontEnd: "test"))
    }

    @Test func aLinkInsideIsMadeAndReadsAsALink() async throws {
        let link = try VirtualPath(parsing: "/Docs/Today/plan link")
        _ = try await session.perform(CreateFolder(try VirtualPath(parsing: "/Docs/Today")))
        let node = try await session.perform(CreateSymbolicLink(link, target: "../plan.txt"))
        #expect(node.special == .symbolicLink && node.linkTarget == "../plan.txt")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.url("files/Docs/Today/plan link")) == "../plan.txt")
        // Never over anything.
        let again = await thrownError(of: try await session.perform(CreateSymbolicLink(link, target: "../other.txt")))
        #expect(again?.kind == .fileExists)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.url("files/Docs/Today/plan link")) == "../plan.txt")
    }

    @Test func aLinkThatLeadsOutIsRefused() async throws {
        // (`up/../..`: with `up` a link to `..`, the kernel would climb three folders from there.)
        _ = try await session.perform(CreateSymbolicLink(try VirtualPath(parsing: "/Docs/up"), target: ".."))
        for target in ["/etc/passwd", "../../etc/passwd", "../../../x", "", "up/../..", "plan.txt/../../x"] {
            let error = await thrownError(of: try await session.perform(CreateSymbolicLink(try VirtualPath(parsing: "/Docs/out"), target: target)))
            #expect(error?.kind == .outsideSandbox, "\(target)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.url("files/Docs/out")))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: directory.url("files/Docs/out"))) == nil)
    }

    @Test func storageWithoutLinksSaysSo() async throws {
        let error = await thrownError(of: try await session.perform(CreateSymbolicLink(try VirtualPath(parsing: "memory:/link"), target: "x")))
        #expect(error?.kind == .unsupported)
        let missing = await thrownError(of: try await session.perform(CreateSymbolicLink(try VirtualPath(parsing: "/Nowhere/link"), target: "x")))
        #expect(missing?.kind == .noSuchFile && missing?.path?.description == "files:/Nowhere")
    }
}
