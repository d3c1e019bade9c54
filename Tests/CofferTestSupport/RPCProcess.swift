public import Foundation

/// `coffer rpc` (or `coffer mcp`) running with pipes, for end-to-end tests. It belongs to the
/// test that started it (``OwnsProcesses``), which ends it if the test does not.
public final class RPCProcess: RPCClient, @unchecked Sendable {
    private var process: TestProcess!

    /// Starts `coffer --container C COMMAND ARGUMENTS`; a `launcher` runs first, as for `CofferBinary.run`.
    public init(container: String, framing: Framing = .ndjson, command subcommand: String = "rpc", arguments: [String] = [],
                environment: [String: String] = [:], launcher: [String] = [], program: URL = CofferBinary.url) throws {
        super.init(framing: framing)
        let command = [program.path, "--container", container, subcommand] + arguments
        // The reading thread holds the client only weakly: a test that lets go of it lets go of both.
        process = try TestProcess(launcher + command, environment: CofferBinary.environment(environment),
                                  output: .streamed { [weak self] bytes in self?.receive(bytes) })
    }

    /// What the server wrote on standard error so far (complete once it has exited).
    public var errors: String { process.errors }

    override var diagnostics: String { errors }

    public override func sendRaw(_ data: Data) { process.write(data) }

    /// Closes standard input: the end of input for the server.
    public func closeInput() { process.closeInput() }

    /// `coffer mcp` on `container`, through the handshake of a 2025-11-25 client.
    public static func mcp(container: String, arguments: [String] = []) async throws -> RPCProcess {
        let mcp = try RPCProcess(container: container, command: "mcp", arguments: arguments)
        _ = try await mcp.awaitCall("initialize", ["protocolVersion": "2025-11-25", "capabilities": [String: Any](),
                                                   "clientInfo": ["name": "tests", "version": "1"]])
        mcp.notify("notifications/initialized")
        return mcp
    }

    /// Sends a signal to the server.
    public func signal(_ number: Int32) { process.signal(number) }

    /// Waits up to `timeout` seconds for the process to end and returns its exit status.
    /// - Throws: ``ProcessTimeout`` (naming the command and its last errors), after ending it.
    public func waitForExit(timeout: Double = 30) throws -> Int32 {
        try process.waitForExit(timeout: timeout)
    }

    public var isRunning: Bool { process.isRunning }

    /// The server's process id.
    public var pid: Int32 { process.pid }
}
