import CofferCore
import Foundation
import Synchronization

/// The session's watches, by id, and the `files/didChange` notifications they send.
/// All of them are cancelled when the session ends, so nothing keeps watching for a
/// client that has gone away.
final class WatchRegistry: Sendable {
    private struct State {
        var next = 1
        var watches: [String: any ChangeWatch] = [:]
        var closed = false
    }

    private let writer: FrameWriter
    private let state = Mutex(State())

    init(writer: FrameWriter) { self.writer = writer }

    /// Starts a watch under a new id and keeps it.
    func add(_ start: @Sendable (String) async throws -> any ChangeWatch) async throws -> String {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return "w\(state.next)"
        }
        let watch = try await start(id)
        let kept = state.withLock { state in
            guard !state.closed else { return false }
            state.watches[id] = watch
            return true
        }
        if !kept { watch.cancel() }
        return id
    }

    /// Stops the watch `id`; `false` if there is none.
    func remove(_ id: String) -> Bool {
        guard let watch = state.withLock({ $0.watches.removeValue(forKey: id) }) else { return false }
        watch.cancel()
        return true
    }

    /// Stops every watch; later ones are stopped as soon as they start.
    func closeAll() {
        let watches = state.withLock { state in
            state.closed = true
            defer { state.watches.removeAll() }
            return Array(state.watches.values)
        }
        for watch in watches { watch.cancel() }
    }

    func notify(_ id: String, _ changes: [FileChange]) {
        let notification = Notification(params: .init(watchId: id, changes: changes.map {
            .init(path: $0.path.description, type: $0.kind.rawValue)
        }))
        guard let body = try? JSONEncoder.rpc.encode(notification) else { return }
        writer.send(body)
    }

    private struct Notification: Encodable {
        struct Params: Encodable {
            struct Change: Encodable {
                var path: String
                var type: String
            }
            var watchId: String
            var changes: [Change]
        }
        var jsonrpc = "2.0"
        var method = "files/didChange"
        var params: Params
    }
}
