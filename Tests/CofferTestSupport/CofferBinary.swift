public import Foundation

/// Runs the built `coffer` executable (or another built the same way), for end-to-end tests.
public enum CofferBinary {
    /// The `coffer` executable: `$COFFER_BINARY`, else beside the test bundle, else `.build/debug/coffer`.
    public static let url: URL = {
        if let explicit = ProcessInfo.processInfo.environment["COFFER_BINARY"] {
            return URL(fileURLWithPath: explicit)
        }
        return url(named: "coffer")
    }()

    /// A product of this package by name: beside the test bundle, else in `.build/debug`.
    public static func url(named name: String) -> URL {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/" + name)
    }

    /// A program of one of the example packages (`Examples/*`), as `.ci/build_examples.sh` builds
    /// them: `.build/examples/debug/NAME` under the package's root.
    public static func example(_ name: String) -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/examples/debug/" + name)
    }

    /// This process's environment with `LANG=C.UTF-8` and no other locale variables (so
    /// messages are English unless a test asks), plus `extra`.
    public static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LANG"] = "C.UTF-8"
        environment.removeValue(forKey: "LC_ALL")
        environment.removeValue(forKey: "LC_MESSAGES")
        environment.merge(extra) { $1 }
        return environment
    }

    public struct Result: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
    }

    /// Starts `coffer` with `arguments` and returns at once, its output discarded: for a test
    /// that kills it in the middle of something. The test owns it (``OwnsProcesses``).
    public static func start(_ arguments: [String]) throws -> TestProcess {
        try TestProcess([url.path] + arguments, environment: environment([:]), input: false, output: .discarded,
                        errors: .collected)
    }

    /// Runs `coffer` with `arguments`, feeding `input` on standard input (closed when empty),
    /// for at most `timeout` seconds (``ProcessTimeout`` past it, the process ended).
    /// A `launcher` runs first with the binary's path and the arguments after its own words
    /// (`["/bin/sh", "-c", "ulimit -f 64; exec \"$0\" \"$@\""]`).
    public static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:],
                           launcher: [String] = [], program: URL = url, timeout: Double = 180) throws -> Result {
        let result = try TestProcess.run(launcher + [program.path] + arguments, input: Data(input.utf8),
                                         environment: Self.environment(environment), timeout: timeout)
        return Result(status: result.status, output: result.outputText, errors: result.errorText)
    }

}

extension CofferBinary {
    /// ``run(_:input:environment:launcher:program:)`` waited for on a thread of its own, so
    /// an `async` test does not hold one of the cooperative pool's few threads (one per core,
    /// shared by every test in the process) while `coffer` runs.
    public static func running(_ arguments: [String], input: String = "",
                               environment: [String: String] = [:]) async throws -> Result {
        try await offPool { try run(arguments, input: input, environment: environment) }
    }
}

/// Runs blocking work on a thread of its own and awaits it. What it starts belongs to the
/// calling test (``ProcessOwner/current`` is carried over).
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let owner = ProcessOwner.current
    return try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try ProcessOwner.$current.withValue(owner) { try body() } })
        }
    }
}

extension CofferBinary {
    /// The exit status and peak resident memory (KiB) of `coffer ARGUMENTS`, from its own
    /// rusage: a small Python waits for it, since a child forked from the test process would
    /// count the test's memory as its own.
    public static func peakMemory(_ arguments: [String], environment extra: [String: String] = [:])
        async throws -> (status: Int32, kibibytes: Int) {
        let wrapper = "import resource,subprocess,sys; r=subprocess.run(sys.argv[1:]); " +
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        let text = try await offPool {
            try TestProcess.run(["python3", "-c", wrapper, url.path] + arguments, environment: environment(extra)).outputText
        }
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 2, let peak = Int(fields[fields.count - 1]), let status = Int32(fields[fields.count - 2]) else {
            return (-1, Int.max)
        }
        return (status, peak)
    }
}
