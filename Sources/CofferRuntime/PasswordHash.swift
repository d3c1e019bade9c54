import CCofferCrypto
public import CofferCore
import Foundation

/// A password kept as a slow hash: PBKDF2 with HMAC-SHA-256 from the system's libcrypto,
/// a random 16-byte salt, and as many iterations as OWASP advises for it (600,000: about
/// a third of a second here), so a stolen store costs an attacker that much per guess.
public struct PasswordHash: Codable, Sendable, Hashable {
    public static let defaultIterations: UInt32 = 600_000

    /// Base64.
    public var salt: String
    public var iterations: UInt32
    /// Base64 of the 32-byte key.
    public var hash: String

    /// Hashes `password` with a fresh salt.
    public init(_ password: String, iterations: UInt32 = defaultIterations) throws(CofferError) {
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = generator.next() }
        self.salt = Data(salt).base64EncodedString()
        self.iterations = iterations
        self.hash = Data(try Self.derive(password, salt: salt, iterations: iterations)).base64EncodedString()
    }

    /// Whether `password` is the one hashed (compared in constant time).
    public func matches(_ password: String) -> Bool {
        guard let salt = Data(base64Encoded: salt), let expected = Data(base64Encoded: hash),
              let derived = try? Self.derive(password, salt: Array(salt), iterations: iterations),
              derived.count == expected.count
        else { return false }
        return zip(derived, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func derive(_ password: String, salt: [UInt8], iterations: UInt32) throws(CofferError) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: 32)
        let bytes = Array(password.utf8)
        let done = bytes.withUnsafeBytes { raw in
            coffer_pbkdf2_sha256(raw.baseAddress, raw.count, salt, salt.count, iterations, &key, key.count)
        }
        guard done == 1 else { throw CofferError(.unsupported, detail: "libcrypto's PBKDF2 (libssl3) is needed for share passwords") }
        return key
    }
}
