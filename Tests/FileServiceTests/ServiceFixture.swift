import CofferCore
import CofferTestSupport
import FileService

/// A standard container in a temporary folder (`c`), its service, and a session of it.
struct ServiceFixture {
    let directory: TemporaryDirectory
    let service: FileService
    let session: Session

    init(_ name: String) async throws {
        directory = TemporaryDirectory(name)
        service = try FileService.standard(container: try await Container.open(at: directory.url("c")))
        session = try service.openSession(SessionOptions(frontEnd: "test"))
    }
}

extension ServiceFixture {
    /// The virtual path `text` names.
    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }

    /// Writes `text` at `place`, replacing what is there.
    func save(_ text: String, at place: String) async throws {
        _ = try await session.perform(WriteFile(try path(place), bytes: Array(text.utf8), conflict: .replace))
    }
}
