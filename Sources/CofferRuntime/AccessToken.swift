public import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The secret a client must show on every request, as Jupyter's token: kept in the container
/// (`AppData/web-token` for the web page, `AppData/mcp-token` for MCP over HTTP; readable by its
/// owner only) so the same address works again, replaced on request (`--new-token`).
public struct AccessToken: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The token in the file, or a new one when there is none (or `renew`).
    public func current(renew: Bool) throws(CofferError) -> String {
        if !renew, let token = read() { return token }
        // The system's generator reads getrandom(2): unpredictable, as a secret must be.
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let token = bytes.map { String(format: "%02x", $0) }.joined()
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CofferError(.ioError, detail: "the access token cannot be written") }
        let written = Array(token.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == token.utf8.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CofferError(.ioError, detail: "the access token cannot be written")
        }
        return token
    }

    /// What the file holds now (another server started with `--new-token` may have replaced it).
    public func read() -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.count >= 32 && token.allSatisfy(\.isHexDigit) ? token : nil
    }

    /// Compares in time that does not depend on where they differ.
    public static func same(_ given: String, _ token: String) -> Bool {
        let a = Array(given.utf8), b = Array(token.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
