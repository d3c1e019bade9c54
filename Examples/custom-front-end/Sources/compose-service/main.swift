// A minimal application built on Coffer: open a container, compose a FileService with the
// standard mounts plus one of the application's own, open a session on it and perform
// operations — what every front end does.
//
//     swift run compose-service /tmp/compose-demo     (from Examples/custom-front-end)
import CofferBackends
import CofferCore
import FileService
import Foundation

func runDemo(at location: String) async throws {
    let container = try await Container.open(at: location)

    // An extra, read-only mount over the container's caches, just to show composition.
    let caches = try LocalSandboxBackend(rootPath: container.cachesPath, writable: false)
    let service = try FileService.standard(
        container: container, extraMounts: [Mount(name: "caches", backend: caches, isWritable: false)])

    // A front end's session: what it asks is audited as `compose`.
    let session = try service.openSession(SessionOptions(frontEnd: "compose"))
    _ = try await session.perform(CreateFolder(try VirtualPath(parsing: "/Examples/报告"), intermediates: true))
    for mount in service.mounts {
        let page = try await session.perform(ListFolder(.root(of: mount.name)))
        print("\(mount.name): \(page.items.map(\.name).joined(separator: ", "))")
    }
    await session.close()
}

let location = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "/coffer-compose-demo"
do {
    try await runDemo(at: location)
} catch {
    print("error: \(CofferError.wrapping(error).userMessage(in: .english))")
    exit(1)
}
