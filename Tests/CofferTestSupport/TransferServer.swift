import CofferCore
import Foundation

/// `Servers/transfer_server.py` (Python's http.server) on a free port of 127.0.0.1, for the
/// transfer tests; it ends with the test (its standard input closes).
public final class TransferServer: @unchecked Sendable {
    private let process = Process()
    /// The server's standard input: it ends when this closes, with the test or its process.
    private let input = Pipe.closedOnExec()
    public let port: Int

    /// The Python that runs it: `COFFER_TEST_PYTHON` (CI's `.ci/venv`, which has python-multipart
    /// for the upload tests), else `python3`.
    public static var python: String { ProcessInfo.processInfo.environment["COFFER_TEST_PYTHON"] ?? "python3" }

    /// Whether that Python can parse multipart bodies (python-multipart).
    public static var parsesForms: Bool {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = [python, "-c", "import python_multipart"]
        check.standardError = FileHandle.nullDevice
        guard (try? check.run()) != nil else { return false }
        check.waitForExit()
        return check.exitStatus == 0
    }

    /// Whether it speaks HTTPS.
    public let isTLS: Bool

    /// HTTP, or with `certificate` and `key` (PEM files) HTTPS.
    public init(certificate: String? = nil, key: String? = nil) throws {
        isTLS = certificate != nil
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Servers/transfer_server.py")
        let output = Pipe.closedOnExec()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, script.path] + (certificate.flatMap { cert in key.map { ["--tls", cert, $0] } } ?? [])
        process.standardOutput = output
        process.standardInput = input
        // Not the test's own output: a server that outlived it would keep `swift test` waiting.
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw CofferError(.ioError, detail: "no port") }
        self.port = port
    }

    public func url(_ path: String) -> String { "\(isTLS ? "https" : "http")://127.0.0.1:\(port)\(path)" }

    /// A certificate authority and a certificate it signed for 127.0.0.1, made with `openssl`
    /// in `folder`: `(ca, certificate, key)` paths.
    public static func makeCertificates(in folder: String) throws -> (ca: String, certificate: String, key: String) {
        let script = """
            set -e
            cd '\(folder)'
            openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj '/CN=Coffer Test CA' 2>/dev/null
            openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj '/CN=127.0.0.1' 2>/dev/null
            printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n' > ext.cnf
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext.cnf 2>/dev/null
            """
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        process.waitForExit()
        guard process.exitStatus == 0 else { throw CofferError(.ioError, detail: "openssl could not make certificates") }
        return (folder + "/ca.pem", folder + "/server.pem", folder + "/server.key")
    }

    /// The `Range` header of every request so far (`nil` for none).
    public func rangesSeen() throws -> [String?] {
        // Asked with curl: the test's own HTTP is what is under test.
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-sS", url("/stats")]
        let output = Pipe.closedOnExec()
        curl.standardOutput = output
        try curl.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        curl.waitForExit()
        let ranges = try JSONSerialization.jsonObject(with: data) as? [Any] ?? []
        return ranges.dropLast().map { $0 as? String }  // the last is this request
    }

    /// The bytes the server sends for `name`, version `version`, as the script makes them.
    public static func payload(_ name: String, size: Int, version: Int = 1) -> [UInt8] {
        let seed = Array("\(name):\(version);".utf8)
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBufferPointer { buffer in
            seed.withUnsafeBufferPointer { seed in
                var index = 0
                while index < size {
                    let count = min(seed.count, size - index)
                    UnsafeMutableRawPointer(buffer.baseAddress! + index).copyMemory(from: seed.baseAddress!, byteCount: count)
                    index += count
                }
            }
        }
        return bytes
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.terminate()
    }
}

