import CofferCore
import CofferInMemory
import CofferPreview
import CofferTestSupport
import FileService
import Foundation
import Testing

/// The media files, made once per test process (they take a second or two).
enum Media {
    private static let directory: TemporaryDirectory? = {
        guard MediaFixtures.available else { return nil }
        let directory = TemporaryDirectory("coffer-media")
        do {
            try MediaFixtures.make(in: directory.path)
        } catch {
            fatalError("the media files could not be made: \(error)")
        }
        return directory
    }()

    static var folder: String? { directory?.path }
    static let missing = "needs a Python with Pillow (COFFER_TEST_PYTHON), vips (libvips-tools) and bsdtar (libarchive-tools)"
}

/// A standard container whose `files:/m` holds the media files, with an in-memory mount
/// `mem:` beside it (a backend without descriptors, as a remote one is).
struct PreviewFixture {
    let directory = TemporaryDirectory("coffer-preview")
    let service: FileService
    let session: Session
    let previewer: Previewer
    let memory = InMemoryBackend()

    init() async throws {
        let container = try await Container.open(at: directory.url("c"))
        service = try FileService.standard(container: container,
                                           extraMounts: [Mount(name: "mem", backend: memory)])
        session = try service.openSession(SessionOptions(frontEnd: "test"))
        previewer = Previewer(service: service)
        let media = try #require(Media.folder)
        try FileManager.default.copyItem(atPath: media, toPath: container.userFilesPath + "/m")
    }

    var userFiles: String { directory.url("c/Documents/UserFiles") }
    var thumbnails: String { directory.url("c/Library/Caches/Thumbnails") }

    func path(_ name: String) -> VirtualPath {
        VirtualPath(mount: "files", trustedComponents: ["m"] + name.split(separator: "/").map(String.init))
    }

    func preview(_ name: String) async throws -> Preview {
        try await session.perform(PreviewItem(path(name)))
    }

    func thumbnail(_ name: String, pixels: Int = 128) async throws -> Thumbnail {
        try await session.perform(MakeThumbnail(path(name), pixels: pixels))
    }

    /// Files in the cache's folder `sub` (`normal`, `fail/coffer-1.0`), but for the hidden
    /// folder of manifests.
    func cached(_ sub: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(thumbnails)/\(sub)")) ?? [])
            .filter { $0 != ".coffer-folders" }.sorted()
    }
}

/// The error a throwing call ended with, as a `CofferError`.
func coffer<T>(_ body: () async throws -> T) async -> CofferError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return CofferError.wrapping(error)
    }
}
