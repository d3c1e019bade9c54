#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The encodings Coffer reads text in (seed 002 §3.2: files from Windows machines and older
/// Chinese software come as UTF-16 or GBK, and must still open).
public enum TextCharset: String, Sendable, Hashable, CaseIterable {
    /// UTF-8, with or without a byte-order mark.
    case utf8 = "UTF-8"
    /// UTF-16, least significant byte first (what Windows writes).
    case utf16LittleEndian = "UTF-16LE"
    /// UTF-16, most significant byte first.
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
    /// The encoding the bytes are read in.
    public let charset: TextCharset
    /// Bytes that were not valid in the charset so far.
    public private(set) var invalidSequences = 0
    /// Bytes of a character cut at the end of the last chunk, held for the next one.
    public var pendingByteCount: Int { carry.count }
    private var carry: [UInt8] = []

    /// A decoder of `charset`, with nothing carried over.
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
            let (consumed, produced, failure) = IconvStep.convert(converter, &input, from: position, into: &scratch)
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

/// How text is written back to a file: its charset, and whether a byte-order mark leads.
/// UTF-16 is always written with its mark (without one Coffer, like most readers, would not
/// know it for UTF-16 again).
public struct TextForm: Sendable, Hashable {
    /// The encoding written.
    public var charset: TextCharset
    /// Whether a byte-order mark leads the file.
    public var byteOrderMark: Bool

    /// A form of `charset`; UTF-16 always has its mark.
    public init(charset: TextCharset, byteOrderMark: Bool = false) {
        self.charset = charset
        self.byteOrderMark = byteOrderMark || charset == .utf16LittleEndian || charset == .utf16BigEndian
    }

    /// UTF-8 without a mark: what new text files are.
    public static let utf8 = TextForm(charset: .utf8)

    /// The form a file already has, from its first bytes; `nil` for one that is not text.
    public init?<Bytes: Collection<UInt8>>(of sample: Bytes, isComplete: Bool) {
        guard case .text(let charset, let bomLength) = TextDetection.detect(sample, isComplete: isComplete) else { return nil }
        self.init(charset: charset, byteOrderMark: bomLength > 0)
    }

    /// The names `export --encoding` and `files/write`'s `charset` take: `utf-8`,
    /// `utf-8-bom`, `utf-16` (little-endian, with its mark), `utf-16le`, `utf-16be`,
    /// `gb18030` (any case).
    public init?(name: String) {
        switch name.lowercased() {
        case "utf-8", "utf8": self.init(charset: .utf8)
        case "utf-8-bom", "utf8-bom": self.init(charset: .utf8, byteOrderMark: true)
        case "utf-16", "utf16", "utf-16le": self.init(charset: .utf16LittleEndian)
        case "utf-16be": self.init(charset: .utf16BigEndian)
        case "gb18030", "gbk", "gb2312": self.init(charset: .gb18030)
        default: return nil
        }
    }

    /// The name this form is written as (`UTF-8`, `UTF-8-BOM`, `UTF-16LE`…).
    public var name: String { charset == .utf8 && byteOrderMark ? "UTF-8-BOM" : charset.name }

    /// How many bytes the mark takes at the start of a file.
    public var byteOrderMarkLength: Int { byteOrderMarkBytes.count }

    /// The mark written first.
    var byteOrderMarkBytes: [UInt8] {
        guard byteOrderMark else { return [] }
        switch charset {
        case .utf8: return [0xEF, 0xBB, 0xBF]
        case .utf16LittleEndian: return [0xFF, 0xFE]
        case .utf16BigEndian: return [0xFE, 0xFF]
        case .gb18030: return []
        }
    }

    /// `text` in this form, its byte-order mark first unless `continuing` (an append). A
    /// character the charset cannot hold is refused (`notEncodable`, naming the line it is
    /// on, from 1), never replaced or dropped.
    public func encode(_ text: String, path: VirtualPath? = nil, continuing: Bool = false) throws(CofferError) -> [UInt8] {
        let utf8 = Array(text.utf8)
        if charset == .utf8 { return (continuing ? [] : byteOrderMarkBytes) + utf8 }
        return try encode(utf8: utf8, path: path, continuing: continuing)
    }

    /// The same from bytes that should be UTF-8 (a file an editor saved): a byte that is not
    /// valid UTF-8 is refused like a character that does not fit (`notEncodable`, its line).
    public func encode(utf8 input: [UInt8], path: VirtualPath? = nil, continuing: Bool = false) throws(CofferError) -> [UInt8] {
        var output = continuing ? [] : byteOrderMarkBytes
        guard let converter = iconv_open(charset.name, "UTF-8"), Int(bitPattern: converter) != -1 else {
            throw CofferError(.unsupported, path: path, detail: charset.name)
        }
        defer { iconv_close(converter) }
        var source = input
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        var position = 0
        while position < source.count {
            let (consumed, produced, failure) = IconvStep.convert(converter, &source, from: position, into: &scratch)
            output.append(contentsOf: scratch[..<produced])
            position += consumed
            if failure == E2BIG || (failure == 0 && consumed > 0) { continue }
            if failure == 0 { break }
            // EILSEQ (a character the charset has no bytes for, or a byte that is not UTF-8),
            // or EINVAL (UTF-8 cut off at the end).
            let line = 1 + input[..<position].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            throw CofferError(.notEncodable, path: path, detail: "\(line)")
        }
        return output
    }
}

/// One call of `iconv`, shared by decoding and encoding: converts `input` from `position`
/// into `scratch`.
enum IconvStep {
    /// - Returns: the input bytes consumed, the output bytes produced into `scratch`, and the
    ///   `errno` of a call that stopped short (0 when it did not).
    static func convert(_ converter: iconv_t, _ input: inout [UInt8], from position: Int,
                        into scratch: inout [UInt8]) -> (consumed: Int, produced: Int, failure: Int32) {
        input.withUnsafeMutableBufferPointer { source in
            scratch.withUnsafeMutableBufferPointer { target in
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(source.baseAddress! + position)
                    .assumingMemoryBound(to: CChar.self)
                var inLeft = source.count - position
                var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(target.baseAddress!)
                    .assumingMemoryBound(to: CChar.self)
                var outLeft = target.count
                let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                return (source.count - position - inLeft, target.count - outLeft, result == -1 ? errno : 0)
            }
        }
    }
}
