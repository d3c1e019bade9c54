import CofferBackendConformance
import CofferCore
import QuotaMemory
import Testing

/// The example's backend keeps the contract (the conformance suite) and its own rule (the quota).
struct QuotaMemoryBackendTests {
    @Test func conformsToTheStorageBackendContract() async {
        let subject = BackendConformance.Subject.seeding(name: "mem: with a quota", mount: "mem") { _ in
            QuotaMemoryBackend(quota: 4 << 20)
        }
        let report = await BackendConformance.run(subject)
        #expect(report.isPassing, "\(report)")
    }

    @Test func aWriteOverTheQuotaFailsAndLeavesNothing() async throws {
        let backend = QuotaMemoryBackend(quota: 100)
        let kept = try await backend.makeWrite(at: try VirtualPath(parsing: "mem:/kept.txt"))
        try await kept.write(Array(repeating: 1, count: 60))
        try await kept.commit(conflict: .fail)

        let path = try VirtualPath(parsing: "mem:/too big.bin")
        let write = try await backend.makeWrite(at: path)
        try await write.write(Array(repeating: 2, count: 30))
        let error = await #expect(throws: CofferError.self) { try await write.write(Array(repeating: 2, count: 30)) }
        #expect(error?.kind == .outOfSpace && error?.path == path)
        await write.abort()
        #expect(backend.usedBytes == 60)
        #expect(try await backend.contentsOfFolder(at: .root(of: "mem")).map(\.name) == ["kept.txt"])

        // Replacing gives the old file's bytes back.
        let replacing = try await backend.makeWrite(at: try VirtualPath(parsing: "mem:/kept.txt"))
        try await replacing.write(Array(repeating: 3, count: 90))
        try await replacing.commit(conflict: .replace)
        #expect(backend.usedBytes == 90)
        #expect(try await backend.space() == StorageSpace(usedBytes: 90, totalBytes: 100, availableBytes: 10))
    }

    @Test func copiesInsideTheMountCountToo() async throws {
        let backend = QuotaMemoryBackend(quota: 100)
        let write = try await backend.makeWrite(at: try VirtualPath(parsing: "mem:/a.bin"))
        try await write.write(Array(repeating: 1, count: 60))
        try await write.commit(conflict: .fail)
        let error = await #expect(throws: CofferError.self) {
            try await backend.copyItem(at: try VirtualPath(parsing: "mem:/a.bin"), to: try VirtualPath(parsing: "mem:/b.bin"),
                                       conflict: .fail, progress: .none)
        }
        #expect(error?.kind == .outOfSpace)
        #expect(try await backend.contentsOfFolder(at: .root(of: "mem")).map(\.name) == ["a.bin"])
    }
}
