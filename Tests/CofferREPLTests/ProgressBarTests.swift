import CofferCore
import CofferREPL
import Synchronization
import Testing

struct ProgressBarTests {
    final class Screen: Sendable {
        private let writes = Mutex<[String]>([])
        func write(_ text: String) { writes.withLock { $0.append(text) } }
        var all: [String] { writes.withLock { $0 } }
    }

    @Test func rendersPercentBarAndSizes() {
        let text = ProgressBar.render(label: "Copying", progress: OperationProgress(completedBytes: 250_000_000,
                                                                                   totalBytes: 1_000_000_000),
                                      columns: 80)
        #expect(text.hasPrefix("Copying  25% ["))
        #expect(text.hasSuffix("]  250 MB / 1.0 GB"))
        #expect(text.count < 80)
        let bar = text.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }
        #expect(bar.count == 40)
        #expect(bar.filter { $0 == "=" }.count == 10)
    }

    /// Many small files are counted by files: their bytes alone would say little (issue 39).
    @Test func manyItemsAreCountedByItemsAndBytes() {
        let text = ProgressBar.render(label: "Importing", progress: OperationProgress(completedBytes: 3_000, totalBytes: 20_000,
                                                                                    completedItems: 12_000, totalItems: 20_000),
                                      columns: 100)
        #expect(text.hasPrefix("Importing  60% ["), "\(text)")
        #expect(text.hasSuffix("]  12000 of 20000 items, 3.0 kB / 20 kB") || text.hasSuffix("]  12000 of 20000 items, 3.0 KB / 20 KB"), "\(text)")
    }

    @Test func fitsNarrowTerminalsAndUnknownTotals() {
        let narrow = ProgressBar.render(label: "Copying", progress: OperationProgress(completedBytes: 1, totalBytes: 2),
                                        columns: 30)
        #expect(!narrow.contains("["))
        #expect(narrow.count < 30)
        #expect(ProgressBar.render(label: "Moving", progress: OperationProgress(completedItems: 3), columns: 80)
                == "Moving  3 items")
    }

    @Test func quickOperationsDrawNothing() {
        let screen = Screen()
        let bar = ProgressBar(label: "Copying", delay: .seconds(60), columns: 80, write: screen.write)
        bar.reporter.expect(bytes: 100, items: 1)
        bar.reporter.advance(bytes: 100, items: 1)
        bar.finish()
        #expect(screen.all.isEmpty)
    }

    @Test func longOperationsDrawAndEraseOnFinish() {
        let screen = Screen()
        let bar = ProgressBar(label: "Copying", delay: .zero, columns: 80, write: screen.write)
        bar.reporter.expect(bytes: 100, items: 1)
        bar.finish()
        bar.finish()
        bar.reporter.advance(bytes: 100)  // after finishing: ignored
        #expect(screen.all.count == 2)
        #expect(screen.all.first?.hasPrefix("\rCopying   0% [") == true)
        #expect(screen.all.last == "\r\u{1B}[K")
    }
}
