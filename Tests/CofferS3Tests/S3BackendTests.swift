import CofferHTTP
@testable import CofferS3
import CofferBackendConformance
import CofferCore
import Foundation
import Synchronization
import Testing

/// The S3 backend against the backend contract, on a new bucket of the test server for
/// each check (see ``S3ClientTests`` for the server).
@Suite(.s3Server)
struct S3BackendTests {
    static let subject = BackendConformance.Subject.seeding(name: "S3 on the test server", mount: "s3") { scratch in
        let client = try S3ClientTests.client()
        try client.createBucket()
        return S3Backend(client: client, spoolFolder: scratch)
    }

    @Test func theBackendContractHolds() async throws {
        guard S3TestServer.endpoint != nil else {
            Issue.record("COFFER_REQUIRE_S3=1 but COFFER_TEST_S3_ENDPOINT is not set")
            return
        }
        let report = await BackendConformance.run(Self.subject)
        #expect(report.isPassing, "\(report)")
        #expect(report.passed.count >= 18, "\(report.passed)")
        #expect(report.passed.contains("kept versions") && report.passed.contains("trash copies"), "\(report.passed)")
    }

    /// A listing costs one LIST request per 1,000 entries and none per object: 2,300 objects
    /// and 40 folders in one folder are three requests.
    @Test func aLargeFolderListsCompletelyInFewRequests() async throws {
        guard let client = try S3TestServer.newBucket() else { return }
        // Written from several threads at once: 2,340 small PUTs.
        let keys = (0..<2_300).map { String(format: "Big/file %04d.txt", $0) } + (0..<40).map { "Big/Sub \($0)/x.txt" }
        try await S3TestServer.put(keys, with: client) { key in .bytes([1]) }
        let backend = S3Backend(client: client, spoolFolder: NSTemporaryDirectory())
        client.sent.withLock { $0.removeAll() }
        let listing = try await backend.contentsOfFolder(at: VirtualPath.root(of: "s3").appending(trustedName: "Big"))
        #expect(listing.count == 2_340)
        #expect(listing.filter { $0.kind == .folder }.count == 40)
        #expect(client.sent.withLock { $0 } == ["GET": 3], "\(client.sent.withLock { $0 })")

        // Read as a program reads it (`coffer mount`'s readdir): a request per page, each when
        // the one before has been taken; the same items as the listing read whole.
        client.sent.withLock { $0.removeAll() }
        let big = VirtualPath.root(of: "s3").appending(trustedName: "Big")
        let pages = try await backend.folderPages(at: big)
        #expect(client.sent.withLock { $0 } == ["GET": 1])
        var paged: [FileNode] = []
        while true {
            let page = try await pages.nextPage()
            if page.isEmpty { break }
            #expect(page.count <= 1_000)
            paged += page
            #expect(client.sent.withLock { $0["GET"] ?? 0 } <= 3)
        }
        #expect(client.sent.withLock { $0 } == ["GET": 3], "\(client.sent.withLock { $0 })")
        #expect(paged.map(\.name).sorted() == listing.map(\.name).sorted())
        #expect(paged.map(\.size).reduce(0, +) == listing.map(\.size).reduce(0, +))
        await #expect { _ = try await backend.folderPages(at: big.appending(trustedName: "Nothing")) } throws: { error in
            (error as? CofferError)?.kind == .noSuchFile
        }
    }

    /// Pages that show nothing (Coffer's partial uploads and the folder's own marker come first)
    /// are read past; a file and a folder of one name show once, as the file, even across pages.
    @Test func pagesSkipWhatIsNotShown() async throws {
        guard let client = try S3TestServer.newBucket() else { return }
        let keys = ["Box/", "Box/a", "Box/a/inside.txt", "Box/b.txt"] + (0..<5).map { "Box/c/\($0).txt" }
            + (1...4).map { "Box/.coffer-partial-0000abcd-\($0)" } + ["Box/e.txt"]
        for key in keys { try client.put(key, body: .bytes(key.hasSuffix("/") ? [] : [7])) }
        let backend = S3Backend(client: client, spoolFolder: NSTemporaryDirectory())
        let box = VirtualPath.root(of: "s3").appending(trustedName: "Box")
        let pages = S3FolderPages(box, in: backend, pageSize: 2)
        try await pages.readFirst()
        var names: [String] = []
        while true {
            let page = try await pages.nextPage()
            if page.isEmpty { break }
            names += page.map(\.name)
        }
        let whole = try await backend.contentsOfFolder(at: box)
        #expect(names.sorted() == whole.map(\.name).sorted(), "\(names)")
        #expect(names.sorted() == ["a", "b.txt", "c", "e.txt"], "\(names)")
    }

    /// Folders as S3 tools make them: a listing of a prefix written by another tool, with an
    /// empty folder's marker, a key under a missing marker, and the mount below a prefix.
    @Test func foldersAreWhatS3ToolsShow() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let bucket = "coffer-\(UUID().uuidString.prefix(8).lowercased())"
        let client = try S3ClientTests.client(bucket: bucket)
        try client.createBucket()
        for key in ["Team/Plans/q1.txt", "Team/Empty/", "Team/notes.md", "Team/.hidden-by-dot", "outside.txt"] {
            try client.put(key, body: .bytes(key.hasSuffix("/") ? [] : Array(key.utf8)))
        }
        let configuration = try S3Configuration.resolve(
            try S3Location(parsing: "s3://\(bucket)/Team"), endpoint: S3TestServer.endpoint,
            environment: ["AWS_ACCESS_KEY_ID": "test:tester", "AWS_SECRET_ACCESS_KEY": "testing"], home: "/nonexistent")
        let scratch = NSTemporaryDirectory()
        let backend = S3Backend(configuration: configuration, spoolFolder: scratch)
        let root = VirtualPath.root(of: "s3")
        let listing = try await backend.contentsOfFolder(at: root)
        #expect(Set(listing.map(\.name)) == ["Plans", "Empty", "notes.md", ".hidden-by-dot"])
        #expect(listing.first { $0.name == "Plans" }?.kind == .folder && listing.first { $0.name == ".hidden-by-dot" }?.isHidden == true)
        #expect(try await backend.contentsOfFolder(at: root.appending(trustedName: "Empty")).isEmpty)
        #expect(try await backend.node(at: root.appending(trustedName: "Plans")).kind == .folder)
        #expect(try await backend.node(at: root.appending(trustedName: "notes.md")).size == Int64("Team/notes.md".utf8.count))
        let outside = await #expect(throws: CofferError.self) { try await backend.node(at: root.appending(trustedName: "outside.txt")) }
        #expect(outside?.kind == .noSuchFile)
        // A file written through the backend keeps its date, and rclone's header carries it.
        let write = try await backend.makeWrite(at: root.appending(trustedName: "dated.txt"))
        try await write.write(Array("x".utf8))
        let date = Date(timeIntervalSince1970: 1_600_000_000.5)
        try await write.setAttributes(permissions: nil, modificationDate: date)
        try await write.commit(conflict: .fail)
        #expect(try client.head("Team/dated.txt")?.modified == date)
        #expect(try await backend.node(at: root.appending(trustedName: "dated.txt")).modificationDate == date)
    }
}
