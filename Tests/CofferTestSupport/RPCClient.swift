public import Foundation

/// A JSON-RPC client for end-to-end tests, over any byte stream: frames messages in either
/// framing, reads every frame the server writes (checking each LSP header exactly), and
/// lets tests wait for responses and notifications. ``RPCProcess`` runs `coffer rpc` on
/// pipes; ``RPCSocketClient`` connects to `coffer rpc --listen`.
public class RPCClient: @unchecked Sendable {
    public enum Framing: Sendable { case lsp, ndjson }

    public let framing: Framing
    let lock = NSLock()
    private var messages: [Any] = []
    private var rawFrames: [Data] = []
    private var headerProblems: [String] = []
    private var nextID = 1

    init(framing: Framing) { self.framing = framing }

    /// Writes bytes as they are; each transport says how.
    public func sendRaw(_ data: Data) { fatalError("a transport writes") }

    /// What the server said on the side, for timeout messages (its standard error).
    var diagnostics: String { "" }

    /// LSP headers the server wrote that were not exactly `Content-Length: N`.
    public var badHeaders: [String] { lock.withLock { headerProblems } }

    /// Every frame body the server wrote, as bytes.
    public var frames: [Data] { lock.withLock { rawFrames } }

    // MARK: Sending

    /// Frames and writes one message body.
    public func send(body: Data) {
        switch framing {
        case .lsp: sendRaw(Data("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
        case .ndjson: sendRaw(body + Data("\n".utf8))
        }
    }

    public func send(_ message: Any) {
        send(body: try! JSONSerialization.data(withJSONObject: message, options: [.fragmentsAllowed]))
    }

    /// Sends a request with a fresh integer id and returns the id.
    @discardableResult
    public func sendRequest(_ method: String, _ params: [String: Any]? = nil) -> Int {
        let id = lock.withLock { () -> Int in defer { nextID += 1 }; return nextID }
        var message: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method]
        if let params { message["params"] = params }
        send(message)
        return id
    }

    public func notify(_ method: String, _ params: [String: Any]? = nil) {
        var message: [String: Any] = ["jsonrpc": "2.0", "method": method]
        if let params { message["params"] = params }
        send(message)
    }

    /// Sends a request and waits for its response.
    public func call(_ method: String, _ params: [String: Any]? = nil, timeout: Double = 30) throws -> [String: Any] {
        try response(to: sendRequest(method, params), timeout: timeout)
    }

    /// `initialize` with a locale.
    @discardableResult
    public func initialize(locale: String = "en") throws -> [String: Any] {
        try call("initialize", ["locale": locale, "clientInfo": ["name": "tests"]])
    }

    // MARK: Receiving

    /// Waits for the response with this id (as JSON compares ids: any number or string).
    public func response(to id: Any, timeout: Double = 30) throws -> [String: Any] {
        try waitFor(timeout: timeout, "a response to \(id)") { message in
            guard let object = message as? [String: Any], object["method"] == nil else { return nil }
            return Self.sameID(object["id"], id) ? object : nil
        }
    }

    /// ``response(to:timeout:)`` for an `async` test: it polls with `Task.sleep`, holding
    /// no thread while it waits.
    public func awaitResponse(to id: Any, timeout: Double = 30) async throws -> [String: Any] {
        try await awaitMessage(timeout: timeout, "a response to \(id)") { message in
            guard let object = message as? [String: Any], object["method"] == nil else { return nil }
            return Self.sameID(object["id"], id) ? object : nil
        }
    }

    /// ``call(_:_:timeout:)`` for an `async` test.
    public func awaitCall(_ method: String, _ params: [String: Any]? = nil, timeout: Double = 30) async throws -> [String: Any] {
        try await awaitResponse(to: sendRequest(method, params), timeout: timeout)
    }

    /// ``waitFor(timeout:_:_:)`` for an `async` test.
    public func awaitMessage<T>(timeout: Double = 30, _ what: String, _ match: (Any) -> T?) async throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            // Looked at once more after the deadline: a test held off its thread for a while
            // must not fail for an answer that came meanwhile.
            let expired = Date() >= deadline
            if let found = received.lazy.compactMap(match).first { return found }
            if expired { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw RPCTimeout(description: "timed out waiting for \(what); stderr: \(diagnostics)")
    }

    /// Every message so far (responses, notifications, batch arrays).
    public var received: [Any] { lock.withLock { messages } }

    /// The params of every notification with this method so far.
    public func notifications(_ method: String) -> [[String: Any]] {
        received.compactMap { message in
            guard let object = message as? [String: Any], object["method"] as? String == method else { return nil }
            return object["params"] as? [String: Any]
        }
    }

    /// Waits until `match` finds something among the messages received.
    public func waitFor<T>(timeout: Double = 30, _ what: String, _ match: (Any) -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let expired = Date() >= deadline
            if let found = received.lazy.compactMap(match).first { return found }
            if expired { break }
            usleep(2_000)
        }
        throw RPCTimeout(description: "timed out waiting for \(what); stderr: \(diagnostics)")
    }

    public static func sameID(_ a: Any?, _ b: Any) -> Bool {
        switch (a, b) {
        case (let x as String, let y as String): return x == y
        case (let x as NSNumber, let y as NSNumber): return x == y
        case (let x as NSNumber, let y as Int): return x.int64Value == Int64(y)
        case (is NSNull, is NSNull): return true
        default: return false
        }
    }

    // MARK: Frames

    /// Bytes the server wrote and no frame has taken yet.
    private var pending = Data()

    /// Takes bytes the server wrote, in order, and keeps every complete frame among them;
    /// a transport calls this from the one thread that reads.
    func receive(_ bytes: Data) {
        lock.lock()
        pending.append(bytes)
        var buffer = pending
        lock.unlock()
        var bodies: [Data] = []
        while let body = nextBody(&buffer) { bodies.append(body) }
        let parsed = bodies.map { try? JSONSerialization.jsonObject(with: $0, options: [.fragmentsAllowed]) }
        lock.withLock {
            pending = buffer
            rawFrames += bodies
            messages += parsed.compactMap { $0 }
        }
    }

    /// Takes one complete frame off `buffer`, checking the server's header format exactly.
    private func nextBody(_ buffer: inout Data) -> Data? {
        switch framing {
        case .ndjson:
            guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            let body = buffer[buffer.startIndex..<newline]
            buffer = Data(buffer[(newline + 1)...])
            return Data(body)
        case .lsp:
            guard let end = buffer.range(of: Data("\r\n\r\n".utf8)) else { return nil }
            let header = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            guard header.hasPrefix("Content-Length: "), !header.contains("\r\n"),
                  let length = Int(header.dropFirst("Content-Length: ".count)) else {
                lock.withLock { headerProblems.append(header) }
                buffer = Data()
                return nil
            }
            guard buffer.count - (end.upperBound - buffer.startIndex) >= length else { return nil }
            let body = buffer[end.upperBound..<(end.upperBound + length)]
            buffer = Data(buffer[(end.upperBound + length)...])
            return Data(body)
        }
    }
}

public struct RPCTimeout: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}
