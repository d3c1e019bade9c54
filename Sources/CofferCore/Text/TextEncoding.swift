#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The encodings Coffer reads text in (seed 002 §3.2: files from Windows machines and older
/// Chinese software come as UTF-16 or GBK, and must still open).
public enum TextCharset: String, Sendable, Hashable, CaseIterable {
    case utf8 = "UTF-8"
    case utf16LittleEndian = "UTF-16LE"
    case utf16BigEndian = "UTF-16BE"
    /// A superset of GBK and GB 2312.
    case gb18030 = "GB18030"

    /// The name to show and to hand to `iconv`.
    public var name: String { rawValue }
}

/// What a sample of a file turned out to be.
public enum TextDetection: Sendable, Hashable {
    /// Text in `charset`, after a byte-order mark of `bomLength` bytes (0 when none).
    case text(TextCharset, bomLength: Int)
    /// Not text in any encoding Coffer reads.
    case binary

    /// Decides from the first bytes of a file.
    ///
    /// A byte-order mark wins. Without one, a NUL byte means binary (UTF-16 is recognised
    /// only with its mark); then the sample must be valid UTF-8, else valid GB 18030.
    /// `isComplete` says the sample is the whole file; when it is not, a character cut in
    /// half at its end does not count against an encoding.
    public static func detect<Bytes: Collection<UInt8>>(_ sample: Bytes, isComplete: Bool) -> TextDetection {
        let head = Array(sample.prefix(3))
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { return .text(.utf8, bomLength: 3) }
        if head.starts(with: [0xFF, 0xFE]) { return .text(.utf16LittleEndian, bomLength: 2) }
        if head.starts(with: [0xFE, 0xFF]) { return .text(.utf16BigEndian, bomLength: 2) }
        let bytes = Array(sample)
        if bytes.contains(0) { return .binary }
        for charset in [TextCharset.utf8, .gb18030] {
            var decoder = StreamingTextDecoder(charset: charset)
            _ = decoder.decode(bytes, isFinal: isComplete)
            if decoder.invalidSequences == 0 { return .text(charset, bomLength: 0) }
        }
        return .binary
    }
}

/// Turns bytes in one of the ``TextCharset``s into text, a chunk at a time, with `iconv`.
///
/// A character split between two chunks is carried over to the next call. Invalid bytes
/// become U+FFFD and are counted, so callers can tell how clean the text was.
public struct StreamingTextDecoder {
    public let charset: TextCharset
    /// Bytes that were not valid in the charset so far.
    public private(set) var invalidSequences = 0
    /// Bytes of a character cut at the end of the last chunk, held for the next one.
    public var pendingByteCount: Int { carry.count }
    private var carry: [UInt8] = []

    public init(charset: TextCharset) { self.charset = charset }

    /// Decodes `bytes` after whatever the previous call left. With `isFinal`, an incomplete
    /// character at the end is replaced rather than kept.
    public mutating func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes, isFinal: Bool) -> String {
        var input = carry
        input.append(contentsOf: bytes)
        carry = []
        guard !input.isEmpty else { return "" }
        guard let converter = iconv_open("UTF-8", charset.name), Int(bitPattern: converter) != -1 else {
            // iconv without this charset: keep what is valid UTF-8, which is the best left.
            return String(decoding: input, as: UTF8.self)
        }
        defer { iconv_close(converter) }
        let unit = (charset == .utf16LittleEndian || charset == .utf16BigEndian) ? 2 : 1
        var output: [UInt8] = []
        output.reserveCapacity(input.count + input.count / 2)
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        var position = 0
        while position < input.count {
            let (consumed, produced, failure) = input.withUnsafeMutableBufferPointer { source in
                scratch.withUnsafeMutableBufferPointer { target in
                    var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(source.baseAddress! + position)
                        .assumingMemoryBound(to: CChar.self)
                    var inLeft = source.count - position
                    var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(target.baseAddress!)
                        .assumingMemoryBound(to: CChar.self)
                    var outLeft = target.count
                    let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                    let failure: Int32 = result == -1 ? errno : 0
                    return (source.count - position - inLeft, target.count - outLeft, failure)
                }
            }
            output.append(contentsOf: scratch[..<produced])
            position += consumed
            switch failure {
            case 0, E2BIG:
                continue
            case EINVAL where !isFinal:
                // A character cut at the end of this chunk: keep it for the next one.
                carry = Array(input[position...])
                position = input.count
            default:
                // EILSEQ, or a cut character at the very end: one replacement, then go on.
                invalidSequences += 1
                output.append(contentsOf: [0xEF, 0xBF, 0xBD])
                position = min(input.count, position + unit)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
