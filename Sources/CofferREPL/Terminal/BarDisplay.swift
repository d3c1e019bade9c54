import CofferCore
import FileService
import Synchronization

/// Shows an operation's progress as a ``ProgressBar`` on standard error: a new bar for each
/// attempt, erased when the attempt ends (before a conflict question, say).
final class BarDisplay: ProgressDisplay {
    private let label: String
    private let makeBar: @Sendable (String) -> ProgressBar
    private let current = Mutex<ProgressBar?>(nil)

    init(label: String, makeBar: @escaping @Sendable (String) -> ProgressBar) {
        self.label = label
        self.makeBar = makeBar
    }

    func begin() -> ProgressReporter {
        let bar = makeBar(label)
        current.withLock { $0 = bar }
        return bar.reporter
    }

    func end() {
        current.withLock { bar in
            bar?.finish()
            bar = nil
        }
    }
}
