import CofferCore
import CofferJSONRPC
import FileService
import Foundation
import Synchronization

/// MCP as a dialect of Coffer's JSON-RPC connection: no lifecycle gate (a 2025-11-25
/// client sends `initialize` first, a 2026-07-28 one never does, and both may share a
/// process), `notifications/cancelled` naming `requestId`, progress asked for in
/// `_meta.progressToken` and sent as `notifications/progress`, and no answer to a request
/// the client cancelled.
struct MCPDialect: RPCDialect {
    /// How paths from clients are read; every conversation uses it.
    var paths: PathResolver
    /// The tools offered (`--tools`, `--structured`).
    var tools: ToolChoice = .all

    var cancelNotification: (method: String, idParam: String) { ("notifications/cancelled", "requestId") }
    var progressTokenPlace: ProgressTokenPlace { .meta }
    var answersCancelledRequests: Bool { false }

    func makeLifecycle(session: Session, send: @escaping @Sendable (Data) -> Void) -> any RPCLifecycle {
        MCPConversation(session: session, paths: paths, tools: tools, send: send)
    }

    func progressDisplay(token: ProgressToken, method: String,
                         send: @escaping @Sendable (Data) -> Void) -> any ProgressDisplay {
        MCPProgress(token: token, send: send)
    }
}

/// What one MCP conversation knows of its client: what a 2025-11-25 client said in
/// `initialize` (its capabilities, whether it offers roots), and the roots it offered.
///
/// A 2026-07-28 request carries all of that in its own `_meta`; nothing of it is kept.
final class MCPConversation: RPCLifecycle, Sendable {
    private let session: Session
    let paths: PathResolver
    let tools: ToolChoice
    private let send: @Sendable (Data) -> Void
    private struct State {
        var offersRoots = false
        var rootsRequests = 0
        var initialized = false
    }
    private let state = Mutex(State())

    init(session: Session, paths: PathResolver, tools: ToolChoice = .all, send: @escaping @Sendable (Data) -> Void) {
        self.session = session
        self.paths = paths
        self.tools = tools
        self.send = send
    }

    func ends(_ method: String) -> Bool { false }

    func request(_ method: String, locale: String?, session: Session) -> LifecycleDecision { .proceed }

    func notification(_ method: String) -> LifecycleDecision {
        switch method {
        case "notifications/initialized":
            state.withLock { $0.initialized = true }
            askForRoots()
        case "notifications/roots/list_changed":
            askForRoots()
        default:
            break
        }
        return .proceed
    }

    var endedCleanly: Bool { true }

    /// `initialize` saw the client's capabilities.
    func clientInitialized(capabilities: JSONValue?) {
        state.withLock { $0.offersRoots = capabilities?["roots"] != nil }
    }

    /// The ids of the `roots/list` requests this server sends.
    private static let rootsPrefix = "coffer-roots-"

    private func askForRoots() {
        guard let number = state.withLock({ state -> Int? in
            guard state.offersRoots else { return nil }
            state.rootsRequests += 1
            return state.rootsRequests
        }) else { return }
        let request: JSONValue = ["jsonrpc": "2.0", "id": .string(Self.rootsPrefix + String(number)), "method": "roots/list"]
        send(Data(request.jsonText.utf8))
    }

    func receivedResponse(_ message: Data) -> Bool {
        guard let response = try? JSONDecoder().decode(JSONValue.self, from: message),
              let id = response["id"]?.string, id.hasPrefix(Self.rootsPrefix) else { return false }
        // Only the answer to the latest request counts: an older one may be out of date.
        let latest = state.withLock { Self.rootsPrefix + String($0.rootsRequests) }
        guard id == latest, let roots = response["result"]?["roots"]?.array else { return true }
        let folders = roots.compactMap { $0["uri"]?.string.flatMap(FileURI.hostPath) }
        // A root that is not a folder here is left out; the others still count.
        let usable = folders.filter { folder in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue
        }
        if usable.count < roots.count { log("\(roots.count - usable.count) of the client's roots are not folders here") }
        do {
            try session.offerHostFolders(usable)
        } catch {
            log("the client's roots cannot be used: \(error.userMessage(in: .english))")
        }
        return true
    }
}

/// `notifications/progress` for a request that carried `_meta.progressToken`: `progress`
/// counts bytes when the work knows how many, items otherwise, never going back, at most
/// ten a second.
final class MCPProgress: ProgressDisplay {
    private let token: ProgressToken
    private let send: @Sendable (Data) -> Void
    private let last = Mutex<(pace: ProgressPace, progress: Int64)>((ProgressPace(), -1))

    init(token: ProgressToken, send: @escaping @Sendable (Data) -> Void) {
        self.token = token
        self.send = send
    }

    func begin() -> ProgressReporter {
        let weak = WeakProgress(self)
        return ProgressReporter { progress in weak.progress?.report(progress) }
    }

    func end() {}

    private func report(_ progress: OperationProgress) {
        // Counted as every front end counts (``OperationProgress/measure``).
        let (done, total) = progress.measured
        let byBytes = progress.totalBytes > 0
        let due = last.withLock { last -> Bool in
            guard done > last.progress, last.pace.admits(complete: done >= total) else { return false }
            last.progress = done
            return true
        }
        guard due else { return }
        var params: [String: JSONValue] = ["progress": .integer(done)]
        params["progressToken"] = switch token {
        case .string(let text): .string(text)
        case .integer(let value): .integer(value)
        }
        if total > 0 { params["total"] = .integer(total) }
        var message = "\(progress.completedItems) of \(progress.totalItems) items"
        if byBytes { message += ", \(progress.completedBytes) of \(progress.totalBytes) bytes" }
        params["message"] = .string(message)
        let notification: JSONValue = ["jsonrpc": "2.0", "method": "notifications/progress", "params": .object(params)]
        send(Data(notification.jsonText.utf8))
    }
}

private final class WeakProgress: @unchecked Sendable {
    weak var progress: MCPProgress?
    init(_ progress: MCPProgress) { self.progress = progress }
}

func log(_ text: String) {
    FileHandle.standardError.write(Data("coffer mcp: \(text)\n".utf8))
}

/// `file://` URIs, as MCP's roots and resources name host files.
enum FileURI {
    /// The host path a `file://` URI names (`file:///srv/a%20b` → `/srv/a b`), or `nil`.
    static func hostPath(_ uri: String) -> String? {
        guard let url = URL(string: uri), url.scheme == "file", url.host == nil || url.host == "" || url.host == "localhost"
        else { return nil }
        let path = url.path
        return path.isEmpty ? nil : path
    }

    /// The URI of a host path.
    static func uri(hostPath: String) -> String { URL(fileURLWithPath: hostPath).absoluteString }
}
