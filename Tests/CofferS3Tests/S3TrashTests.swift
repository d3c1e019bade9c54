@testable import CofferS3
import CofferCore
import Foundation
import Testing

/// The bucket's own trash: freedesktop.org's layout at the top of the bucket, items moved
/// in and out on the server, each mount of a prefix seeing its own items.
@Suite(.enabled(if: S3TestServer.endpoint != nil || S3TestServer.required,
                "no S3 server: set COFFER_TEST_S3_ENDPOINT (.ci/run starts a Ceph RGW)"))
struct S3TrashTests {
    func backend(_ client: S3Client, prefix: String) throws -> S3Backend {
        let configuration = try S3Configuration.resolve(
            try S3Location(parsing: "s3://\(client.configuration.location.bucket)\(prefix)"), endpoint: S3TestServer.endpoint,
            environment: ["AWS_ACCESS_KEY_ID": "test:tester", "AWS_SECRET_ACCESS_KEY": "testing"], home: "/nonexistent")
        return S3Backend(client: S3Client(configuration), spoolFolder: NSTemporaryDirectory())
    }

    @Test func itemsGoToTheBucketsTrashAndComeBack() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let client = try S3ClientTests.client()
        try client.createBucket()
        let date = Date(timeIntervalSince1970: 1_600_000_000)
        try client.put("Team/notes 笔记.txt", body: .bytes(Array("hello".utf8)), modified: date)
        try client.put("Team/Plans/q1.txt", body: .bytes(Array("q1".utf8)))
        try client.put("Team/Plans/Empty/", body: .bytes([]))
        try client.put("Other/x.txt", body: .bytes(Array("x".utf8)))
        let team = try backend(client, prefix: "/Team"), other = try backend(client, prefix: "/Other")
        let root = VirtualPath.root(of: "t")
        let results = await team.trash([root.appending(trustedName: "notes 笔记.txt"), root.appending(trustedName: "Plans"),
                                        root.appending(trustedName: "missing")])
        let note = try results[0].get(), plans = try results[1].get()
        #expect(throws: CofferError.self) { try results[2].get() }
        #expect(note.id == "notes 笔记.txt" && plans.id == "Plans")
        // The layout: info first, the items under files/, nothing left at the old keys.
        let trash = ".Trash-\(getuid())/"
        let keys = Set(try team.allObjects(under: "").map(\.key))
        #expect(keys == ["Other/x.txt", trash + "info/notes 笔记.txt.trashinfo", trash + "info/Plans.trashinfo",
                         trash + "files/notes 笔记.txt", trash + "files/Plans/q1.txt", trash + "files/Plans/Empty/"])
        var infoText: [UInt8] = []
        try client.get(trash + "info/notes 笔记.txt.trashinfo") { infoText += $0; return true }
        let info = try #require(TrashInfo(parsing: String(decoding: infoText, as: UTF8.self)))
        #expect(info.path == "Team/notes 笔记.txt" && info.deletionDate != nil)
        #expect(String(decoding: infoText, as: UTF8.self).contains("Path=Team/notes%20%E7%AC%94%E8%AE%B0.txt"))
        // Each mount lists the items of its own prefix.
        let listing = try await team.trashListing(mount: "t")
        #expect(listing.items.map(\.id).sorted() == ["Plans", "notes 笔记.txt"])
        #expect(listing.items.first { $0.id == "Plans" }?.size == 2)
        #expect(listing.items.first { $0.id == "Plans" }?.originalPath == root.appending(trustedName: "Plans"))
        #expect(try await other.trashListing(mount: "o").items.isEmpty)
        // The same name trashed again gets a name of its own.
        try client.put("Team/notes 笔记.txt", body: .bytes(Array("second".utf8)))
        let second = try await team.trash([root.appending(trustedName: "notes 笔记.txt")])[0].get()
        #expect(second.id == "notes 笔记 (2).txt")
        // Restored in place with its date; a restore onto a taken name fails.
        try await team.restoreTrashed(note.id, to: note.originalPath)
        #expect(try client.head("Team/notes 笔记.txt")?.modified == date)
        let taken = await #expect(throws: CofferError.self) { try await team.restoreTrashed(second.id, to: note.originalPath) }
        #expect(taken?.kind == .fileExists)
        try await team.restoreTrashed(plans.id, to: plans.originalPath)
        #expect(try await team.contentsOfFolder(at: root.appending(trustedName: "Plans")).map(\.name).sorted() == ["Empty", "q1.txt"])
        // Emptying deletes what is left, and only that.
        #expect(try await team.emptyTrash(mount: "t", olderThan: nil) == 1)
        #expect(Set(try team.allObjects(under: "").map(\.key)) == ["Other/x.txt", "Team/notes 笔记.txt", "Team/Plans/q1.txt",
                                                                   "Team/Plans/Empty/"])
    }

    /// A mount of the whole bucket does not show the trash at its top.
    @Test func theTrashIsNotInTheListingOfTheBucket() async throws {
        guard S3TestServer.endpoint != nil else { return }
        let client = try S3ClientTests.client()
        try client.createBucket()
        try client.put("a.txt", body: .bytes([1]))
        let whole = try backend(client, prefix: "")
        let root = VirtualPath.root(of: "b")
        _ = try await whole.trash([root.appending(trustedName: "a.txt")])[0].get()
        try client.put("b.txt", body: .bytes([2]))
        #expect(try await whole.contentsOfFolder(at: root).map(\.name) == ["b.txt"])
        #expect(try await whole.trashListing(mount: "b").items.map(\.originalPath) == [root.appending(trustedName: "a.txt")])
    }
}
