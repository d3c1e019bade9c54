import CofferCore
import FileService
import Foundation
import Synchronization

/// `$/progress` notifications for a request that carried a `workDoneToken`: `begin` when
/// its operation starts work that reports progress, `report` as the percentage changes (at
/// most ten a second), `end` when that work is over.
final class ProgressNotifier: ProgressDisplay {
    private let token: ProgressToken
    private let title: String
    private let write: @Sendable (Data) -> Void
    private let last = Mutex<(pace: ProgressPace, percentage: Int)>((ProgressPace(), -1))

    init(token: ProgressToken, title: String, send: @escaping @Sendable (Data) -> Void) {
        self.token = token
        self.title = title
        self.write = send
    }

    func begin() -> ProgressReporter {
        last.withLock { $0 = (ProgressPace(), -1) }
        send(["kind": "begin", "title": title, "percentage": 0])
        let box = WeakBox()
        box.notifier = self
        return ProgressReporter { progress in box.notifier?.report(progress) }
    }

    func end() { send(["kind": "end"]) }

    private func report(_ progress: OperationProgress) {
        guard let fraction = progress.fraction else { return }
        let percentage = Int(fraction * 100)
        let due = last.withLock { last -> Bool in
            guard percentage != last.percentage, last.pace.admits(complete: percentage == 100) else { return false }
            last.percentage = percentage
            return true
        }
        guard due else { return }
        var message = "\(progress.completedItems) of \(progress.totalItems) items"
        if progress.totalBytes > 0 { message += ", \(progress.completedBytes) of \(progress.totalBytes) bytes" }
        send(["kind": "report", "percentage": percentage, "message": message])
    }

    private func send(_ value: [String: Any]) {
        let params: [String: Any] = ["token": token.jsonObject, "value": value]
        let message: [String: Any] = ["jsonrpc": "2.0", "method": "$/progress", "params": params]
        write(RPCConnection.jsonData(message))
    }
}

/// Lets the reporter's sink reach the notifier without keeping it alive.
private final class WeakBox: @unchecked Sendable {
    weak var notifier: ProgressNotifier?
}
