/// The `tEXt` chunks of a PNG that come before its image data, read from its first bytes:
/// where a thumbnail keeps `Thumb::URI`, `Thumb::MTime` and `Thumb::Size`. Deciding whether
/// a thumbnail is current needs no image library.
enum PNGText {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The keys and values of the `tEXt` chunks in `bytes` (Latin-1, as PNG defines them;
    /// a value that is valid UTF-8 is read as such). Stops at `IDAT` or where `bytes` ends.
    static func chunks(in bytes: [UInt8]) -> [String: String] {
        guard bytes.count > 8, Array(bytes[0..<8]) == signature else { return [:] }
        var texts: [String: String] = [:]
        var at = 8
        while at + 8 <= bytes.count {
            let length = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
            let dataStart = at + 8, dataEnd = dataStart + length
            if type == "IDAT" || type == "IEND" || dataEnd > bytes.count { break }
            if type == "tEXt", let separator = bytes[dataStart..<dataEnd].firstIndex(of: 0) {
                let key = String(decoding: bytes[dataStart..<separator], as: UTF8.self)
                let value = bytes[(separator + 1)..<dataEnd]
                texts[key] = String(validating: value, as: UTF8.self)
                    ?? String(value.map { Character(Unicode.Scalar($0)) })
            }
            at = dataEnd + 4  // and the CRC
        }
        return texts
    }
}
