@testable import CofferBackends
import CofferCore
import CofferTestSupport
import Foundation
import Testing

/// The cache of backup exclusions and `.hidden` lists answers like a fresh read: every
/// change, by Coffer or by another program, is seen by the next `stat` and listing.
struct MetadataCacheTests {
    let directory = TemporaryDirectory("metadata-cache")
    let backend: LocalSandboxBackend

    init() throws {
        directory.make(["Docs/a.txt": "a", "Docs/b.txt": "b", "Docs/.hidden": "b.txt\n", "c.txt": "c", "Plain/x.txt": "x"])
        backend = try LocalSandboxBackend(rootPath: directory.path, syncBeforeCommit: false)
        // Only what has not changed for a second is kept: let these settle.
        Thread.sleep(forTimeInterval: 1.2)
    }

    func path(_ text: String) throws -> VirtualPath { try VirtualPath(parsing: text) }

    func hiddenNames() async throws -> Set<String> {
        Set(try await backend.contentsOfFolder(at: try path("/Docs")).filter { $0.isHidden && $0.name != ".hidden" }.map(\.name))
    }

    @Test func aChangedExclusionIsSeenAtOnce() async throws {
        for item in ["/Docs/a.txt", "/c.txt"] {
            #expect(try await backend.node(at: try path(item)).isExcludedFromBackup == false)
            #expect(try await backend.node(at: try path(item)).isExcludedFromBackup == false)  // from the cache
            try await backend.setExcludedFromBackup(true, at: try path(item))
            #expect(try await backend.node(at: try path(item)).isExcludedFromBackup == true)
            // Straight on the file, as another program would.
            let fd = open(directory.url(String(item.dropFirst())), O_RDONLY | O_CLOEXEC)
            #expect(BackupExclusion.set(false, fd: fd) == 0)
            close(fd)
            #expect(try await backend.node(at: try path(item)).isExcludedFromBackup == false)
        }
        let listed = try await backend.contentsOfFolder(at: try path("/Docs"))
        #expect(listed.allSatisfy { !$0.isExcludedFromBackup })
    }

    @Test func aChangedHiddenListIsSeenAtOnce() async throws {
        // A folder without one, then with one.
        #expect(try await backend.node(at: try path("/Plain/x.txt")).isHidden == false)
        #expect(try await backend.node(at: try path("/Plain/x.txt")).isHidden == false)  // from the cache
        directory.make(["Plain/.hidden": "x.txt\n"])
        #expect(try await backend.node(at: try path("/Plain/x.txt")).isHidden)
        #expect(try await backend.node(at: try path("/Docs/b.txt")).isHidden)
        #expect(try await hiddenNames() == ["b.txt"])
        #expect(try await backend.node(at: try path("/Docs/b.txt")).isHidden)  // from the cache
        // Rewritten in place with a name of the same length.
        let handle = try #require(FileHandle(forWritingAtPath: directory.url("Docs/.hidden")))
        try handle.write(contentsOf: Data("a.txt\n".utf8))
        try handle.close()
        #expect(try await backend.node(at: try path("/Docs/b.txt")).isHidden == false)
        #expect(try await backend.node(at: try path("/Docs/a.txt")).isHidden)
        #expect(try await hiddenNames() == ["a.txt"])
        // Removed, then made again.
        try FileManager.default.removeItem(atPath: directory.url("Docs/.hidden"))
        #expect(try await backend.node(at: try path("/Docs/a.txt")).isHidden == false)
        #expect(try await hiddenNames().isEmpty)
        directory.make(["Docs/.hidden": "b.txt\n"])
        #expect(try await backend.node(at: try path("/Docs/b.txt")).isHidden)
        #expect(try await hiddenNames() == ["b.txt"])
    }

    @Test func aListingToldNotToReadExclusionsSkipsThemAndOnlyThem() async throws {
        try await backend.setExcludedFromBackup(true, at: try path("/Docs/a.txt"))
        let full = try await backend.contentsOfFolder(at: try path("/Docs"), readingBackupExclusion: true)
        let brief = try await backend.contentsOfFolder(at: try path("/Docs"), readingBackupExclusion: false)
        #expect(full.first { $0.name == "a.txt" }?.isExcludedFromBackup == true)
        #expect(brief.allSatisfy { !$0.isExcludedFromBackup })
        func rest(_ nodes: [FileNode]) -> [String] {
            nodes.map { "\($0.path) \($0.kind) \($0.size) \($0.modificationDate) \($0.isHidden) \($0.typeIdentifier)" }.sorted()
        }
        #expect(rest(full) == rest(brief))
        #expect(try await backend.node(at: try path("/Docs/a.txt")).isExcludedFromBackup)
    }
}
