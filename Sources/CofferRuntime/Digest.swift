import CCofferCrypto
public import CofferCore

/// SHA-256 and HMAC-SHA-256, computed by the system's libcrypto (loaded the first time one
/// is asked for): S3's signatures, the web's browser key. Without libcrypto, each throws
/// `unsupported` naming it.
public enum Digest {
    public static func sha256(_ bytes: [UInt8]) throws(CofferError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let done = bytes.withUnsafeBytes { raw in coffer_sha256(raw.baseAddress, raw.count, &digest) }
        guard done == 1 else { throw missing }
        return digest
    }

    public static func hmacSHA256(key: [UInt8], _ bytes: [UInt8]) throws(CofferError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let done = key.withUnsafeBytes { keyBytes in
            bytes.withUnsafeBytes { raw in
                coffer_hmac_sha256(keyBytes.baseAddress, keyBytes.count, raw.baseAddress, raw.count, &digest)
            }
        }
        guard done == 1 else { throw missing }
        return digest
    }

    /// Lower-case hexadecimal, as Signature Version 4 writes digests.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The hash of no bytes, which every bodiless request carries.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public static var missing: CofferError { CofferError(.unsupported, detail: "libcrypto (OpenSSL 3) could not be loaded") }
}

/// A SHA-256 fed in pieces, for a body streamed from a file.
public final class StreamingSHA256 {
    private var state: UnsafeMutableRawPointer?

    public init() throws(CofferError) {
        guard let state = coffer_sha256_begin() else { throw Digest.missing }
        self.state = state
    }

    public func update(_ bytes: UnsafeRawBufferPointer) throws(CofferError) {
        guard let state, coffer_sha256_update(state, bytes.baseAddress, bytes.count) == 1 else { throw Digest.missing }
    }

    /// The digest; the hash cannot be fed after this.
    public func finish() throws(CofferError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let done = coffer_sha256_finish(state, &digest)
        state = nil
        guard done == 1 else { throw Digest.missing }
        return digest
    }

    deinit { coffer_sha256_discard(state) }
}

/// SHA-1 or MD5 fed in pieces: the checksums sync clients send with a file (Nextcloud's
/// `OC-Checksum`), never used to protect anything.
public final class StreamingDigest {
    public enum Algorithm: Int32, Sendable {
        case sha1 = 1, md5 = 2
        /// As `OC-Checksum` names it.
        public var name: String { self == .sha1 ? "SHA1" : "MD5" }
    }

    public let algorithm: Algorithm
    private var state: UnsafeMutableRawPointer?

    public init(_ algorithm: Algorithm) throws(CofferError) {
        guard let state = coffer_digest_begin(algorithm.rawValue) else { throw Digest.missing }
        (self.algorithm, self.state) = (algorithm, state)
    }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        if let state, coffer_sha256_update(state, bytes.baseAddress, bytes.count) != 1 {
            coffer_sha256_discard(state)
            self.state = nil
        }
    }

    /// The digest in lower-case hexadecimal; the hash cannot be fed after this.
    public func finish() throws(CofferError) -> String {
        var digest = [UInt8](repeating: 0, count: 64)
        let size = coffer_digest_finish(state, &digest, digest.count)
        state = nil
        guard size > 0 else { throw Digest.missing }
        return Digest.hex(Array(digest.prefix(Int(size))))
    }

    deinit { coffer_sha256_discard(state) }
}
