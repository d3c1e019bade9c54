/// The `tEXt` chunks of a PNG that come before its image data, read from its first bytes:
/// where a thumbnail keeps `Thumb::URI`, `Thumb::MTime` and `Thumb::Size`. Deciding whether
/// a thumbnail is current needs no image library.
enum PNGText {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The keys and values of the `tEXt` chunks in `bytes` (Latin-1, as PNG defines them;
    /// a value that is valid UTF-8 is read as such), and whether the chunks before the image
    /// data were all there: `false` when `bytes` ends first.
    static func chunks(in bytes: UnsafeRawBufferPointer) -> (texts: [String: String], complete: Bool) {
        guard bytes.count > 8, signature.indices.allSatisfy({ bytes[$0] == signature[$0] }) else { return ([:], true) }
        var texts: [String: String] = [:]
        var at = 8
        while at + 8 <= bytes.count {
            let length = (0..<4).reduce(0) { $0 << 8 | Int(bytes[at + $1]) }
            let dataStart = at + 8, dataEnd = dataStart + length
            let type = (bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7])
            // IDAT or IEND: the text before the image data has been read.
            if type == (0x49, 0x44, 0x41, 0x54) || type == (0x49, 0x45, 0x4E, 0x44) { return (texts, true) }
            if dataEnd + 4 > bytes.count { return (texts, false) }
            if type == (0x74, 0x45, 0x58, 0x74), let separator = bytes[dataStart..<dataEnd].firstIndex(of: 0) {  // tEXt
                let key = String(decoding: bytes[dataStart..<separator], as: UTF8.self)
                let value = UnsafeRawBufferPointer(rebasing: bytes[(separator + 1)..<dataEnd])
                texts[key] = String(validating: value, as: UTF8.self) ?? String(value.map { Character(Unicode.Scalar($0)) })
            }
            at = dataEnd + 4  // and the CRC
        }
        return (texts, at >= bytes.count && bytes.count > 8 ? false : true)
    }

    /// `png` without its text chunks (`tEXt`, `zTXt`, `iTXt`): what is handed to a client,
    /// whose thumbnail must not carry the container's host path (`Thumb::URI`). Every other
    /// chunk is kept byte for byte, CRC included; bytes that are not a PNG come back as they were.
    static func removingText(from png: [UInt8]) -> [UInt8] {
        guard png.count > 8, png.starts(with: signature) else { return png }
        let textTypes: Set<[UInt8]> = [Array("tEXt".utf8), Array("zTXt".utf8), Array("iTXt".utf8)]
        var kept = signature
        kept.reserveCapacity(png.count)
        var at = 8
        while at + 12 <= png.count {
            let length = png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            let end = at + 12 + length
            guard end <= png.count else { return png }  // cut short: leave it to the reader to refuse
            if !textTypes.contains(Array(png[at + 4..<at + 8])) { kept += png[at..<end] }
            at = end
        }
        return kept
    }

    /// The same, for bytes in an array.
    static func chunks(in bytes: [UInt8]) -> [String: String] {
        bytes.withUnsafeBytes { chunks(in: $0).texts }
    }
}
