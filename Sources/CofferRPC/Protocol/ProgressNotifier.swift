import CofferCore
import Foundation
import Synchronization

/// `$/progress` notifications for a request that carried a `workDoneToken`: `begin` when it
/// starts, `report` as the percentage changes (at most ten a second), `end` when it is
/// answered.
final class ProgressNotifier: Sendable {
    private let token: ProgressToken
    private let title: String
    private let writer: FrameWriter
    private let last = Mutex<(time: Date, percentage: Int)>((.distantPast, -1))
    let reporter: ProgressReporter

    init(token: ProgressToken, title: String, writer: FrameWriter) {
        self.token = token
        self.title = title
        self.writer = writer
        let box = WeakBox()
        reporter = ProgressReporter { progress in box.notifier?.report(progress) }
        box.notifier = self
    }

    func begin() { send(["kind": "begin", "title": title, "percentage": 0]) }

    func end() { send(["kind": "end"]) }

    private func report(_ progress: OperationProgress) {
        guard let fraction = progress.fraction else { return }
        let percentage = Int(fraction * 100)
        let now = Date()
        let due = last.withLock { last -> Bool in
            guard percentage != last.percentage, now.timeIntervalSince(last.time) >= 0.1 || percentage == 100 else { return false }
            last = (now, percentage)
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
        writer.send(RPCServer.jsonData(message))
    }
}

/// Lets the reporter's sink reach the notifier that owns it without a cycle.
private final class WeakBox: @unchecked Sendable {
    weak var notifier: ProgressNotifier?
}
