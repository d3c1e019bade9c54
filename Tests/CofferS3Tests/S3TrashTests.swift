import CofferHTTP
@testable import CofferS3
import CofferCore
@_spi(Engine) import FileService
import Foundation
import Synchronization
import Testing

/// The bucket's own trash: freedesktop.org's layout at the top of the bucket, items moved
/// in and out on the server, each mount of a prefix seeing its own items.
@Suite(.s3Server)
struct S3TrashTests {
    func backend(_ client: S3Client, prefix: String) throws -> S3Backend {
        let configuration = try S3Configuration.resolve(
            try S3Location(parsing: "s3://\(client.configuration.location.bucket)\(prefix)"), endpoint: S3TestServer.endpoint,
            environment: ["AWS_ACCESS_KEY_ID": "test:tester", "AWS_SECRET_ACCESS_KEY": "testing"], home: "/nonexistent")
        return S3Backend(client: S3Client(configuration), spoolFolder: NSTemporaryDirectory())
    }

    @Test func itemsGoToTheBucketsTrashAndComeBack() async throws {
        guard let client = try S3TestServer.newBucket() else { return }
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
        guard let client = try S3TestServer.newBucket() else { return }
        try client.put("a.txt", body: .bytes([1]))
        let whole = try backend(client, prefix: "")
        let root = VirtualPath.root(of: "b")
        _ = try await whole.trash([root.appending(trustedName: "a.txt")])[0].get()
        try client.put("b.txt", body: .bytes([2]))
        #expect(try await whole.contentsOfFolder(at: root).map(\.name) == ["b.txt"])
        #expect(try await whole.trashListing(mount: "b").items.map(\.originalPath) == [root.appending(trustedName: "a.txt")])
    }
}

/// The whole tree below a folder from one flat listing per 1,000 keys, folded as a folder's
/// listing is: what the search walks on a bucket.
@Suite(.s3Server)
struct S3TreeTests {
    @Test func aTreeIsOneFlatListingFoldedIntoFolders() async throws {
        guard let client = try S3TestServer.newBucket() else { return }
        var keys = ["A/one.txt", "A/B/two.txt", "A/B/C/three.txt", "A/Empty/", "A/same", "A/same/inside.txt", "A/.dot/x.txt",
                    "A/bad//name.txt", "top.txt"]
        keys += (0..<1_200).map { String(format: "A/Many/f%04d.txt", $0) }
        try await S3TestServer.put(keys, with: client) { key in .bytes(key.hasSuffix("/") ? [] : [1]) }
        let backend = S3Backend(client: client, spoolFolder: NSTemporaryDirectory())
        let a = VirtualPath.root(of: "s3").appending(trustedName: "A")
        client.sent.withLock { $0.removeAll() }
        let tree = try await backend.contentsOfTree(at: a)
        #expect(client.sent.withLock { $0 } == ["GET": 2], "1,209 keys in two pages, no request per folder or object")
        // Each folder as its own listing shows it.
        for (folder, nodes) in tree where !folder.components.contains("Many") {
            let listed = try await backend.contentsOfFolder(at: folder)
            #expect(Set(nodes.map(\.name)) == Set(listed.map(\.name)), "\(folder)")
            #expect(Set(nodes.map(\.kind)) == Set(listed.map(\.kind)), "\(folder)")
        }
        // `bad/` shows as a folder, as its listing does; the empty name inside it does not.
        #expect(Set(tree[a]?.map(\.name) ?? []) == ["one.txt", "B", "Empty", "same", ".dot", "Many", "bad"])
        #expect(tree[a.appending(trustedName: "Many")]?.count == 1_200)
        #expect(tree[a.appending(trustedName: "Empty")]?.isEmpty == true)
        #expect(tree[a.appending(trustedName: "B").appending(trustedName: "C")]?.map(\.name) == ["three.txt"])
        let missing = await #expect(throws: CofferError.self) {
            try await backend.contentsOfTree(at: VirtualPath.root(of: "s3").appending(trustedName: "nothing"))
        }
        #expect(missing?.kind == .noSuchFile)
    }

    /// The search on a bucket walks that one listing: matches in walk order with their
    /// sizes, and no request per folder or match.
    @Test func theSearchWalksTheFlatListing() async throws {
        guard let client = try S3TestServer.newBucket() else { return }
        let keys = (0..<40).flatMap { folder in (0..<30).map { String(format: "Team/D%02d/note %02d.txt", folder, $0) } }
            + ["Team/D05/budget 2026.xlsx", "Team/D17/Sub/budget.txt", "Team/.hidden/budget.txt"]
        try await S3TestServer.put(keys, with: client) { key in .bytes(Array(key.utf8)) }
        let backend = S3Backend(client: client, spoolFolder: NSTemporaryDirectory())
        let service = FileService(mounts: [Mount(name: "s3", backend: backend)])
        client.sent.withLock { $0.removeAll() }
        let query = SearchQuery(pattern: try NamePattern("budget"), scope: try VirtualPath(parsing: "s3:/Team"))
        var found: [FileNode] = []
        for try await event in try await service.search(query).events {
            if case .matches(let nodes) = event { found += nodes }
        }
        #expect(found.map(\.path.description) == ["s3:/Team/D05/budget 2026.xlsx", "s3:/Team/D17/Sub/budget.txt"])
        #expect(found.first?.size == Int64("Team/D05/budget 2026.xlsx".utf8.count))
        // The scope looked at (a HEAD, a one-key LIST), then the tree's two pages: none of the
        // 40 folders is listed on its own, and no match is asked for.
        #expect(client.sent.withLock { $0 } == ["GET": 3, "HEAD": 1], "\(client.sent.withLock { $0 })")
    }
}

