import CofferCore
import Foundation

/// `Servers/transfer_server.py` (Python's http.server) on a free port of 127.0.0.1, for the
/// transfer tests; it belongs to the test that started it, and ends with it (its standard
/// input closes) if not before.
public final class TransferServer: @unchecked Sendable {
    private let process: TestProcess
    public let port: Int

    /// The Python that runs it: `COFFER_TEST_PYTHON` (CI's `.ci/venv`, which has python-multipart
    /// for the upload tests), else `python3`.
    public static var python: String { ProcessInfo.processInfo.environment["COFFER_TEST_PYTHON"] ?? "python3" }

    /// Whether that Python can parse multipart bodies (python-multipart).
    public static var parsesForms: Bool {
        (try? TestProcess.run([python, "-c", "import python_multipart"], timeout: 60))?.status == 0
    }

    /// Whether it speaks HTTPS.
    public let isTLS: Bool

    /// HTTP, or with `certificate` and `key` (PEM files) HTTPS.
    public init(certificate: String? = nil, key: String? = nil) throws {
        isTLS = certificate != nil
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Servers/transfer_server.py")
        // Its errors are kept for the message of a test that fails with it.
        process = try TestProcess([Self.python, script.path] + (certificate.flatMap { cert in key.map { ["--tls", cert, $0] } } ?? []),
                                  errors: .collected)
        try process.waitForOutput(timeout: 30, "its port") { $0.contains(UInt8(ascii: "\n")) }
        let line = process.output.prefix { $0 != UInt8(ascii: "\n") }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            throw CofferError(.ioError, detail: "no port: \(process.errors)")
        }
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
        guard try TestProcess.run(["/bin/sh", "-c", script], timeout: 120).status == 0 else {
            throw CofferError(.ioError, detail: "openssl could not make certificates")
        }
        return (folder + "/ca.pem", folder + "/server.pem", folder + "/server.key")
    }

    /// The `Range` header of every request so far (`nil` for none).
    public func rangesSeen() throws -> [String?] {
        // Asked with curl: the test's own HTTP is what is under test.
        let data = try TestProcess.run(["curl", "-sS", url("/stats")], timeout: 60).output
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
        process.closeInput()
    }
}
