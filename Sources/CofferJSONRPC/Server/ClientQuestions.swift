public import CofferCore
public import FileService
public import Foundation
import Synchronization

/// Requests the server sends its client, and their answers: how a session's conflict
/// question reaches a person behind a JSON-RPC client (the web page), as the REPL's reaches
/// the terminal.
///
/// A client that answers them says so in `initialize` (`capabilities.conflictQuestions`);
/// ``Initialize`` then sets the session's ``Session/conflictQuestion``. The question is the
/// request `conflict/ask` (RPC.md); no answer — an error, the request cancelled, the
/// connection gone — is "cancel".
public final class ClientQuestions: Sendable {
    private let send: @Sendable (Data) -> Void
    private struct State {
        var next = 0
        var ended = false
        var waiting: [String: CheckedContinuation<Any?, Never>] = [:]
    }
    private let state = Mutex(State())
    /// The ids of the server's requests, apart from any id a client uses.
    private static let prefix = "coffer-ask-"

    public init(send: @escaping @Sendable (Data) -> Void) {
        self.send = send
    }

    /// Sends `method` with `params` and waits for the answer's `result`; `nil` for an error
    /// answer, or when the task is cancelled or ``endAll()`` is called first.
    public func ask(_ method: String, _ params: [String: Any]) async -> Any? {
        let id = state.withLock { state in
            state.next += 1
            return Self.prefix + String(state.next)
        }
        guard let body = try? JSONSerialization.data(withJSONObject: ["jsonrpc": "2.0", "id": id, "method": method,
                                                                     "params": params]) else { return nil }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Any?, Never>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled || state.ended { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if cancelled { continuation.resume(returning: nil) } else { send(body) }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Takes a response to one of the server's requests; `false` for any other message.
    public func receive(_ message: Data) -> Bool {
        guard let response = try? JSONSerialization.jsonObject(with: message) as? [String: Any],
              let id = response["id"] as? String, id.hasPrefix(Self.prefix) else { return false }
        // An answer to a question no longer waited for (cancelled meanwhile) is dropped.
        state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: response["result"])
        return true
    }

    /// Answers every question still waiting with "no answer", and any asked later at once
    /// (the connection ended).
    public func endAll() {
        let waiting = state.withLock { state in
            state.ended = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    /// The session's conflict question, asked of the client as `conflict/ask`: the sentence
    /// saying what is there, in the session's language, and what is there as data. The
    /// client answers `{"choice": "replace" | "keepBoth" | "cancel"}`; a replace may put a
    /// file in a folder's place and the other way round, since the person was told which.
    public func conflictQuestion(language: @escaping @Sendable () -> Language) -> ConflictQuestion {
        { [self] conflict in
            let language = language()
            var params: [String: Any] = [
                "path": conflict.destination.description,
                "message": conflict.sentence(in: language) + " " + LocalizedText(
                    "If it is replaced, \(conflict.whatReplacingKeeps(in: .english)).",
                    "如果替换，\(conflict.whatReplacingKeeps(in: .simplifiedChinese))。")(language),
                "choices": ["replace", "keepBoth", "cancel"],
            ]
            if let existing = conflict.existing {
                var item: [String: Any] = ["kind": existing.kind.rawValue, "name": existing.name]
                if let size = existing.contentSize { item["size"] = size }
                if let usage = conflict.contents {
                    item["contents"] = ["files": usage.files, "folders": usage.folders, "bytes": usage.bytes]
                }
                params["existing"] = item
            }
            let answer = await ask("conflict/ask", params)
            switch (answer as? [String: Any])?["choice"] as? String {
            case "replace", "replaceFolder": return .replaceFolder
            case "keepBoth": return .keepBoth
            default: return nil
            }
        }
    }

    /// The session's changed-file question, asked of the client as `conflict/ask` with
    /// `kind: "changedSinceRead"`: the refusal's sentence in the session's language, and the
    /// choices this save can take (`overwrite`, `keepBoth`, `keepInRecovered`) then `cancel`.
    /// Any other answer is "cancel".
    public func changedFileQuestion(language: @escaping @Sendable () -> Language) -> ChangedFileQuestion {
        { [self] refusal, choices in
            let language = language()
            var params: [String: Any] = [
                "kind": "changedSinceRead",
                "message": refusal.userMessage(in: language).text,
                "choices": choices.map(\.rawValue) + ["cancel"],
            ]
            if let path = refusal.path { params["path"] = path.description }
            let answer = await ask("conflict/ask", params)
            return ((answer as? [String: Any])?["choice"] as? String).flatMap(ChangedFileChoice.init(rawValue:))
        }
    }
}
