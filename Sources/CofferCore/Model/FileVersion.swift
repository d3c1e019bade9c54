/// Which state of a file's content an item is in: an opaque token that changes whenever the
/// content may have changed, for saves that must not overwrite someone else's (`ifVersion`).
///
/// A backend makes it from what its storage has. A local file's is a digest of its device,
/// inode, size and nanosecond modification and change times — a write changes the times, a
/// replace by rename changes the inode, and a change of attributes changes the change time
/// (a save refused then is a false alarm, never a lost write). An S3 object's is its ETag.
/// Clients compare tokens only for equality and send them back as they got them.
public struct FileVersion: Sendable, Hashable, CustomStringConvertible {
    private enum Storage: Hashable {
        /// A digest of a local file's identity and times, written as 16 hex digits.
        case digest(UInt64)
        /// A token the storage gives (an ETag), without quotes.
        case tag(String)
    }

    private let storage: Storage

    /// A local file's version, from its `statx`.
    public init(device: UInt64, inode: UInt64, size: UInt64, modified: (seconds: Int64, nanoseconds: UInt32),
                changed: (seconds: Int64, nanoseconds: UInt32)) {
        // FNV-1a over the fields, then a finaliser so that neighbouring times differ in every
        // digit. Each field is mixed in place: a listing makes one of these per entry.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        Self.mix(device, into: &hash)
        Self.mix(inode, into: &hash)
        Self.mix(size, into: &hash)
        Self.mix(UInt64(bitPattern: modified.seconds), into: &hash)
        Self.mix(UInt64(modified.nanoseconds), into: &hash)
        Self.mix(UInt64(bitPattern: changed.seconds), into: &hash)
        Self.mix(UInt64(changed.nanoseconds), into: &hash)
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        storage = .digest(hash)
    }

    @inline(__always)
    private static func mix(_ field: UInt64, into hash: inout UInt64) {
        var value = field
        for _ in 0..<8 {
            hash = (hash ^ (value & 0xff)) &* 0x100_0000_01b3
            value >>= 8
        }
    }

    /// A version the storage names itself (an S3 ETag; quotes are dropped), or one a client
    /// sent back. `nil` for an empty token.
    public init?(token: String) {
        var token = Substring(token)
        if token.count >= 2, token.hasPrefix("\""), token.hasSuffix("\"") { token = token.dropFirst().dropLast() }
        guard !token.isEmpty else { return nil }
        if token.utf8.count == 16, let value = UInt64(token, radix: 16), token == token.lowercased() {
            storage = .digest(value)
        } else {
            storage = .tag(String(token))
        }
    }

    /// The token clients see and send back.
    public var token: String {
        switch storage {
        case .digest(let value):
            // 16 hex digits: a small string, made without an allocation.
            return String(unsafeUninitializedCapacity: 16) { buffer in
                let digits: StaticString = "0123456789abcdef"
                for index in 0..<16 {
                    buffer[index] = digits.utf8Start[Int((value >> UInt64(60 - 4 * index)) & 0xf)]
                }
                return 16
            }
        case .tag(let tag):
            return tag
        }
    }

    public var description: String { token }
}
