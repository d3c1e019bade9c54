import CofferCore
import Testing

/// How far an operation has come, counted the same way by every front end (issue 48: a
/// download's bar stayed at 0 % while its bytes grew, a move's followed its items).
@Suite struct OperationProgressTests {
    @Test func oneFileIsCountedInBytes() {
        let download = OperationProgress(completedBytes: 30 << 20, totalBytes: 120 << 20, completedItems: 0, totalItems: 1)
        #expect(download.measure == .bytes && download.fraction == 0.25)
        // A move across mounts: a copy and a removal, of one big file.
        let move = OperationProgress(completedBytes: 60 << 20, totalBytes: 120 << 20, completedItems: 0, totalItems: 2)
        #expect(move.measure == .bytes && move.fraction == 0.5)
    }

    @Test func manySmallItemsAreCountedByTheItem() {
        let folder = OperationProgress(completedBytes: 12_000, totalBytes: 20_000, completedItems: 3_000, totalItems: 20_000)
        #expect(folder.measure == .items && folder.fraction == 0.15)
        let unknownSizes = OperationProgress(completedItems: 2, totalItems: 8)
        #expect(unknownSizes.measure == .items && unknownSizes.fraction == 0.25)
    }

    @Test func anUnknownTotalHasNoFraction() {
        #expect(OperationProgress(completedBytes: 5, totalBytes: 0, completedItems: 0, totalItems: 1).fraction == nil)
        #expect(OperationProgress().fraction == nil)
    }
}
