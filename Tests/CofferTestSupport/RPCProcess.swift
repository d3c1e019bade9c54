import Foundation

/// `coffer rpc` (or `coffer mcp`) running with pipes, for end-to-end tests.
public final class RPCProcess: RPCClient, @unchecked Sendable {
    private let process = Process()
    private let stdin = Pipe.closedOnExec()
    private let stdout = Pipe.closedOnExec()
    private let stderr = Pipe.closedOnExec()
    private var errorText = Data()

    /// Starts `coffer --container C COMMAND ARGUMENTS`; a `launcher` runs first, as for `CofferBinary.run`.
    public init(container: String, framing: Framing = .ndjson, command subcommand: String = "rpc", arguments: [String] = [],
                environment: [String: String] = [:], launcher: [String] = [], program: URL = CofferBinary.url) throws {
        super.init(framing: framing)
        let command = [program.path, "--container", container, subcommand] + arguments
        let argv = launcher + command
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst())
        process.environment = CofferBinary.environment(environment)
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let output = stdout.fileHandleForReading.fileDescriptor
        Thread { [self] in readFrames(from: output) }.start()
        Thread { [self] in
            let data = stderr.fileHandleForReading.readDataToEndOfFile()
            lock.withLock { errorText = data }
        }.start()
    }

    /// What the server wrote on standard error so far (complete once it has exited).
    public var errors: String { lock.withLock { String(decoding: errorText, as: UTF8.self) } }

    override var diagnostics: String { errors }

    public override func sendRaw(_ data: Data) {
        try? stdin.fileHandleForWriting.write(contentsOf: data)
    }

    /// Closes standard input: the end of input for the server.
    public func closeInput() { try? stdin.fileHandleForWriting.close() }

    /// `coffer mcp` on `container`, through the handshake of a 2025-11-25 client.
    public static func mcp(container: String, arguments: [String] = []) async throws -> RPCProcess {
        let mcp = try RPCProcess(container: container, command: "mcp", arguments: arguments)
        _ = try await mcp.awaitCall("initialize", ["protocolVersion": "2025-11-25", "capabilities": [String: Any](),
                                                   "clientInfo": ["name": "tests", "version": "1"]])
        mcp.notify("notifications/initialized")
        return mcp
    }

    /// Sends a signal to the server.
    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to end and returns its exit status.
    public func waitForExit(timeout: Double = 30) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        guard !process.isRunning else {
            process.terminate()
            throw RPCTimeout(description: "coffer rpc did not exit")
        }
        return process.exitStatus
    }

    public var isRunning: Bool { process.isRunning }

    /// The server's process id.
    public var pid: Int32 { process.processIdentifier }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
