/// Byte strings that sort paths the way a walk visits them.
///
/// A walk lists each folder in natural order, folders before files, and goes into each
/// folder before its next sibling. Encoding every path as the concatenation of its
/// components' keys — kind, natural-order weights, then the raw name as a tie-break —
/// makes plain byte order (`memcmp`, SQLite's BLOB order) equal to that visiting order:
/// a folder's key is a prefix of its contents' keys, so they follow it directly.
public enum PathSortKey {
    /// The key of one name at the end of a path, folders and packages ranking first.
    public static func component(_ name: String, isFile: Bool) -> [UInt8] {
        let key = NaturalSortKey(name)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + key.weights.count * 3 + key.bytes.count + 1)
        bytes.append(isFile ? 2 : 1)
        // A weight is a class (1–3, in its top nibble) and a value of at most 21 bits (a
        // Unicode scalar, a digit, a digit count): three bytes, class first, keep its order.
        // The first byte is never 0, so the 0 that ends the weights sorts before any further
        // weight: a shorter sequence comes first, as in `NaturalSortKey`.
        for weight in key.weights {
            let packed = (weight >> 28) << 21 | (weight & 0x1F_FFFF)
            bytes.append(UInt8(truncatingIfNeeded: packed >> 16))
            bytes.append(UInt8(truncatingIfNeeded: packed >> 8))
            bytes.append(UInt8(truncatingIfNeeded: packed))
        }
        bytes.append(0)
        // Names hold no NUL, so the closing 0 also puts a prefix first.
        bytes.append(contentsOf: key.bytes)
        bytes.append(0)
        return bytes
    }

    /// The key of a child below a folder whose key is `parent`.
    public static func appending(_ name: String, isFile: Bool, to parent: [UInt8]) -> [UInt8] {
        parent + component(name, isFile: isFile)
    }
}
