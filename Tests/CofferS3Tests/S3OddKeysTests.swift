import CofferHTTP
@testable import CofferS3
import CofferCore
import Foundation
import Testing

/// Keys other S3 tools make that a file name cannot hold as they are (issue 32): listings are
/// asked URL-encoded, so a control character no longer breaks its folder and every folder
/// above it; a name over 255 bytes is shown under a safe name instead of hidden; each is
/// still read, copied, trashed and restored by that name.
@Suite(.s3Server)
struct S3OddKeysTests {
    static let long = String(repeating: "x", count: 300) + ".txt"
    static let keys = ["d/a+b c.txt", "d/bad\u{1}name.txt", "d/ctl\u{2}dir/z.txt", "d/ok%41.txt", "d/" + long, "d/sub/z.txt"]

    func prepared() async throws -> (S3Client, S3Backend, VirtualPath)? {
        guard let client = try S3TestServer.newBucket() else { return nil }
        try await S3TestServer.put(Self.keys, with: client) { key in .bytes(Array(key.utf8)) }
        return (client, S3Backend(client: client, spoolFolder: NSTemporaryDirectory()), VirtualPath.root(of: "s3").appending(trustedName: "d"))
    }

    @Test func everyKeyIsListedAndTheFoldersAboveStillList() async throws {
        guard let (_, backend, folder) = try await prepared() else { return }
        let names = try await backend.contentsOfFolder(at: folder).map(\.name)
        let shortened = try #require(names.first { $0.hasSuffix(".txt") && $0.contains("…-") })
        #expect(shortened.utf8.count <= 255 && shortened.hasPrefix("xxxx"))
        #expect(Set(names) == ["a+b c.txt", "bad\u{1}name.txt", "ctl\u{2}dir", "ok%41.txt", shortened, "sub"], "\(names)")
        #expect(try await backend.contentsOfFolder(at: .root(of: "s3")).map(\.name) == ["d"])
        let inside = try await backend.contentsOfFolder(at: folder.appending(trustedName: "ctl\u{2}dir"))
        #expect(inside.map(\.name) == ["z.txt"])
        // The flat listing a tree walk uses folds them alike.
        let tree = try await backend.contentsOfTree(at: folder)
        #expect(Set(tree[folder]?.map(\.name) ?? []) == Set(names))
        // Read through its safe name: the long key's own bytes.
        let file = try await backend.openFile(at: folder.appending(trustedName: shortened))
        #expect(try await file.read(at: 0, upTo: 1000) == Array(("d/" + Self.long).utf8))
        await file.close()
    }

    @Test func aKeyShownUnderASafeNameIsFoundInAFreshBackend() async throws {
        guard let (client, _, folder) = try await prepared() else { return }
        let listed = try await S3Backend(client: client, spoolFolder: NSTemporaryDirectory()).contentsOfFolder(at: folder)
        let shortened = try #require(listed.first { $0.name.contains("…-") }?.name)
        // Another backend (another process) that never listed the folder stats it by that name.
        let fresh = S3Backend(client: client, spoolFolder: NSTemporaryDirectory())
        #expect(try await fresh.node(at: folder.appending(trustedName: shortened)).size == Int64(("d/" + Self.long).utf8.count))
    }

    @Test func oddKeysGoToTheTrashAndComeBackUnderTheirOwnKeys() async throws {
        guard let (client, backend, folder) = try await prepared() else { return }
        let shortened = try #require(try await backend.contentsOfFolder(at: folder).first { $0.name.contains("…-") }?.name)
        let names = [shortened, "ctl\u{2}dir", "bad\u{1}name.txt"]
        let trashed = await backend.trash(names.map { folder.appending(trustedName: $0) })
        #expect(try trashed.map { try $0.get().originalPath } == names.map { folder.appending(trustedName: $0) })
        #expect(try client.head("d/" + Self.long) == nil)
        #expect(try client.head("d/ctl\u{2}dir/z.txt") == nil)
        let listing = try await backend.trashListing(mount: "s3")
        #expect(listing.items.count == 3 && listing.problems.isEmpty, "\(listing)")
        for item in listing.items { try await backend.restoreTrashed(item.id, to: item.originalPath) }
        for key in ["d/" + Self.long, "d/ctl\u{2}dir/z.txt", "d/bad\u{1}name.txt"] {
            #expect(try client.head(key) != nil, "\(key) restored under its own key")
        }
        // Nothing of the trash is left: no information file without its item.
        #expect(try client.list(prefix: ".Trash-\(getuid())/", delimiter: nil).objects.isEmpty)
    }
}
