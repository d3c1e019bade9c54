import CofferCore
import CofferJSONRPC
import CofferTestSupport
import FileService
import Foundation

/// A JSON-RPC conversation in this process, over ``InProcessConnection``: a real container,
/// the real dispatcher, no process or pipe in between.
final class InProcessServer: @unchecked Sendable {
    let directory = TemporaryDirectory("rpc-in-process")
    let service: FileService
    let connection: RPCConnection
    let client: InProcessConnection.ClientEnd
    private let serving: Task<RPCConnection.Ending, Never>
    private let lock = NSLock()
    private var inbox: [[String: Any]] = []
    private var nextID = 1

    init(configure: (inout RPCServer.Configuration) throws -> Void = { _ in }) async throws {
        let container = try await Container.open(at: directory.url("c"))
        service = try FileService.standard(container: container)
        var configuration = RPCServer.Configuration(language: .english, version: "test")
        try configure(&configuration)
        let (serverEnd, clientEnd) = InProcessConnection.pair(maxMessageBytes: configuration.limits.maxMessageBytes)
        connection = try RPCConnection(service: service, connection: serverEnd, configuration: configuration)
        client = clientEnd
        let connection = connection
        serving = Task { await connection.serve() }
        // Answers are read on a thread of their own: tests wait for them without blocking
        // one of the few threads the server's own tasks run on.
        Thread { [self] in
            while let data = clientEnd.receive(timeout: .seconds(3600)) {
                let parsed = try? JSONSerialization.jsonObject(with: data)
                let raw = String(decoding: data, as: UTF8.self)
                lock.withLock {
                    if var object = parsed as? [String: Any] {
                        object[rawKey] = raw
                        inbox.append(object)
                    }
                    if let batch = parsed as? [Any] { inbox.append(["batch": batch, rawKey: raw]) }
                }
            }
        }.start()
    }

    /// Another conversation with the same service, as a second client of one server.
    func secondClient(configuration: RPCServer.Configuration = RPCServer.Configuration(language: .english, version: "test"))
        throws -> (RPCConnection, InProcessConnection.ClientEnd, Task<RPCConnection.Ending, Never>)
    {
        let (serverEnd, clientEnd) = InProcessConnection.pair()
        let other = try RPCConnection(service: service, connection: serverEnd, configuration: configuration)
        return (other, clientEnd, Task { await other.serve() })
    }

    func user(_ relative: String) -> String { "c/Documents/UserFiles/" + relative }

    // MARK: Talking

    func send(_ message: Any) {
        client.send(try! JSONSerialization.data(withJSONObject: message, options: [.fragmentsAllowed]))
    }

    @discardableResult
    func request(_ method: String, _ params: [String: Any]? = nil) -> Int {
        let id = lock.withLock { () -> Int in defer { nextID += 1 }; return nextID }
        var message: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method]
        if let params { message["params"] = params }
        send(message)
        return id
    }

    func notify(_ method: String, _ params: [String: Any]? = nil) {
        var message: [String: Any] = ["jsonrpc": "2.0", "method": method]
        if let params { message["params"] = params }
        send(message)
    }

    /// The next message matching `match`, keeping the others for later. The timeout only
    /// catches a hang: the server's tasks share two threads with every other test in the
    /// process, and tests that block theirs (running `coffer`, say) can hold them off for
    /// tens of seconds on a loaded machine.
    func next(_ what: String, timeout: Duration = .seconds(120),
              _ match: @escaping ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let expired = ContinuousClock.now >= deadline
            if let found = lock.withLock({ () -> [String: Any]? in
                guard let index = inbox.firstIndex(where: match) else { return nil }
                return inbox.remove(at: index)
            }) { return found }
            guard !expired else { throw RPCTimeout(description: "no \(what)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    func response(to id: Int) async throws -> [String: Any] {
        try await next("answer to \(id)") { ($0["id"] as? Int) == id && $0["method"] == nil }
    }

    func call(_ method: String, _ params: [String: Any]? = nil) async throws -> [String: Any] {
        try await response(to: request(method, params))
    }

    @discardableResult
    func initialize(locale: String = "en") async throws -> [String: Any] {
        try await call("initialize", ["locale": locale])
    }

    /// How the conversation ended.
    func ending() async -> RPCConnection.Ending { await serving.value }
}

/// Where each answer keeps the text it arrived as.
let rawKey = "(raw)"

func result(_ response: [String: Any]) -> [String: Any]? { response["result"] as? [String: Any] }
func errorCode(_ response: [String: Any]) -> Int? { (response["error"] as? [String: Any])?["code"] as? Int }
func errorMessage(_ response: [String: Any]) -> String? { (response["error"] as? [String: Any])?["message"] as? String }
func errorKind(_ response: [String: Any]) -> String? {
    ((response["error"] as? [String: Any])?["data"] as? [String: Any])?["kind"] as? String
}
