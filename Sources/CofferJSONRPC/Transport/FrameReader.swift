import Foundation

/// How messages are delimited on the wire.
public enum Framing: String, Sendable {
    /// `Content-Length: N` headers, a blank line, then N bytes (the Language Server Protocol's).
    case lsp
    /// One JSON text per line (MCP's convention).
    case ndjson
}

/// What the reader found next on the input.
enum Frame: Equatable {
    /// One message body.
    case message(Data)
    /// A message longer than the limit, skipped without being kept.
    case tooLarge(Int)
    /// Bytes that are not a frame (a bad header); the reader has resynchronised.
    case malformed(String)
    /// The input ended; `truncated` when it ended inside a frame.
    case end(truncated: Bool)
}

/// Splits standard input into messages, never holding more than one message (up to the
/// limit) in memory.
///
/// The framing is decided by the first byte unless forced: `C`/`c` is LSP, anything else
/// newline-delimited JSON. LSP headers are matched in any letter case with any spacing
/// around the colon; `Content-Type` and unknown headers are ignored. When a
/// `Content-Length` was wrong, the next header is searched for in what follows, so one
/// bad frame does not end the connection.
final class FrameReader {
    private let fd: Int32
    private let maxMessageBytes: Int
    private(set) var framing: Framing?
    private var buffer = [UInt8]()
    private var start = 0
    private var atEnd = false
    /// What each `read` fills, allocated once: a fresh 64 KiB a read cost more than a small
    /// message's whole handling.
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)

    /// Longest header line accepted.
    static let maxHeaderLine = 8 << 10

    init(fd: Int32, framing: Framing?, maxMessageBytes: Int) {
        self.fd = fd
        self.framing = framing
        self.maxMessageBytes = maxMessageBytes
    }

    /// Whether a whole message is already buffered, so ``next()`` will not wait for input
    /// (newline-delimited input only: for LSP headers it answers `false`).
    var hasWholeMessageBuffered: Bool {
        framing == .ndjson && buffer[start...].contains(UInt8(ascii: "\n"))
    }

    /// The next frame; blocks until one is complete or the input ends.
    func next() -> Frame {
        if framing == nil {
            guard let first = peekSignificantByte() else { return .end(truncated: false) }
            framing = (first == UInt8(ascii: "C") || first == UInt8(ascii: "c")) ? .lsp : .ndjson
        }
        return framing == .lsp ? nextLSP() : nextLine()
    }

    // MARK: Newline-delimited JSON

    private func nextLine() -> Frame {
        while true {
            guard let line = readLine(limit: maxMessageBytes) else { return .end(truncated: false) }
            switch line {
            case .line(let range):
                let trimmed = buffer[range].trimmingWhitespace()
                if trimmed.isEmpty { continue }
                return .message(Data(trimmed))
            case .tooLong(let count):
                return .tooLarge(count)
            case .truncated(let range):
                let trimmed = buffer[range].trimmingWhitespace()
                return trimmed.isEmpty ? .end(truncated: false) : .message(Data(trimmed))
            }
        }
    }

    // MARK: LSP

    private func nextLSP() -> Frame {
        var length: Int?
        var sawHeader = false
        while true {
            guard let line = readLine(limit: Self.maxHeaderLine) else { return .end(truncated: sawHeader) }
            let text: [UInt8]
            switch line {
            case .line(let range): text = Array(buffer[range])
            case .truncated: return .end(truncated: true)
            case .tooLong: return .malformed("a header line is longer than \(Self.maxHeaderLine) bytes")
            }
            let header = text.last == UInt8(ascii: "\r") ? Array(text.dropLast()) : text
            if header.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                guard sawHeader else { continue }  // stray blank lines between frames
                guard let length else { return .malformed("a header block has no Content-Length") }
                return body(length)
            }
            sawHeader = true
            switch Self.parseHeader(header) {
            case .contentLength(let value):
                length = value
            case .other:
                continue
            case .invalid(let problem):
                return .malformed(problem)
            }
        }
    }

    private enum Header {
        case contentLength(Int)
        case other
        case invalid(String)
    }

    private static func parseHeader(_ line: [UInt8]) -> Header {
        let text = String(decoding: line, as: UTF8.self)
        let lowered = text.lowercased()
        // A body shorter than its Content-Length said runs into the next header: find it.
        let key = "content-length"
        if let range = lowered.range(of: key), let colon = lowered[range.upperBound...].firstIndex(of: ":"),
           lowered[range.upperBound..<colon].allSatisfy({ $0 == " " || $0 == "\t" }) {
            let value = lowered[lowered.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard let length = Int(value), length >= 0 else { return .invalid("Content-Length “\(value)” is not a length") }
            return .contentLength(length)
        }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            return .invalid("“\(text.prefix(60))” is not a header")
        }
        return .other
    }

    private func body(_ length: Int) -> Frame {
        guard length <= maxMessageBytes else {
            return discard(length) ? .tooLarge(length) : .end(truncated: true)
        }
        while buffer.count - start < length {
            if !fill() { return .end(truncated: true) }
        }
        let bytes = Data(buffer[start..<(start + length)])
        start += length
        return .message(bytes)
    }

    /// Skips `count` bytes without keeping them. `false` when the input ended first.
    private func discard(_ count: Int) -> Bool {
        var remaining = count
        while remaining > 0 {
            if start == buffer.count && !fill() { return false }
            let take = min(remaining, buffer.count - start)
            start += take
            remaining -= take
        }
        return true
    }

    // MARK: Bytes

    /// Where a line lies in `buffer`, valid until the next read.
    private enum Line {
        case line(Range<Int>)
        case tooLong(Int)
        case truncated(Range<Int>)
    }

    /// The next line without its `\n`; lines over `limit` are skipped to their end.
    private func readLine(limit: Int) -> Line? {
        // How far past `start` has been searched; an offset, since `fill` may move the bytes.
        var searched = 0
        while true {
            if let newline = buffer[(start + searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = newline + 1 }
                return .line(start..<newline)
            }
            if buffer.count - start > limit {
                // Too long: drop what we have and everything up to the next newline.
                var skipped = buffer.count - start
                start = buffer.count
                while true {
                    guard fill() else { return .tooLong(skipped) }
                    if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                        skipped += newline - start
                        start = newline + 1
                        return .tooLong(skipped)
                    }
                    skipped += buffer.count - start
                    start = buffer.count
                }
            }
            searched = buffer.count - start
            guard fill() else {
                if start == buffer.count { return nil }
                defer { start = buffer.count }
                return .truncated(start..<buffer.count)
            }
        }
    }

    private func peekSignificantByte() -> UInt8? {
        while true {
            while start < buffer.count {
                let byte = buffer[start]
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { start += 1 } else { return byte }
            }
            guard fill() else { return nil }
        }
    }

    /// Reads more input. `false` at the end.
    private func fill() -> Bool {
        if atEnd { return false }
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 20 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got > 0 {
                buffer.append(contentsOf: chunk[..<got])
                return true
            }
            if got < 0 && errno == EINTR { continue }
            atEnd = true
            return false
        }
    }
}

extension ArraySlice where Element == UInt8 {
    func trimmingWhitespace() -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return [] }
        return self[first...last]
    }
}
