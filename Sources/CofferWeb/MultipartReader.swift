import CofferHTTPServer
import FileService
import Foundation

/// Reads a `multipart/form-data` body (RFC 7578) as it arrives, in pieces of any size: the
/// files it carries, each as its name and then its bytes. Fields without a file name are
/// skipped; the memory it holds is one boundary's length and one part's headers (at most
/// 16 KiB), whatever the size of the files.
struct MultipartReader {
    enum Event: Equatable {
        /// A part that is a file begins; its `filename` (nil for a field that is not a file).
        case file(String?)
        /// Bytes of the current file.
        case bytes([UInt8])
        /// The closing boundary came.
        case end
    }

    private enum Stage { case preamble, headers, body, done }

    private let delimiter: [UInt8]
    private var stage = Stage.preamble
    private var pending: [UInt8] = []
    private var inFile = false
    static let headerLimit = 16 << 10

    init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        // The body starts with the delimiter without its CR LF: read as if one came before it.
        pending = Array("\r\n".utf8)
    }

    /// The `boundary` parameter of a `Content-Type`, `nil` when there is none (or it is too long).
    static func boundary(in contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return value.isEmpty || value.utf8.count > 70 ? nil : value
        }
        return nil
    }

    /// What a browser sent as a file name, without any folders (old browsers sent whole paths).
    static func lastComponent(of name: String) -> String {
        String(name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? "")
    }

    mutating func feed(_ bytes: ArraySlice<UInt8>) -> [Event] {
        pending += bytes
        var events: [Event] = []
        while true {
            switch stage {
            case .done:
                pending.removeAll()
                return events
            case .preamble:
                guard let found = Self.find(delimiter, in: pending) else {
                    // Keep what could be the start of a delimiter.
                    pending.removeFirst(max(0, pending.count - delimiter.count))
                    return events
                }
                pending.removeFirst(found + delimiter.count)
                stage = .headers
            case .headers:
                // After a delimiter: "--" ends the body, else CR LF and the part's headers.
                if pending.count < 2 { return events }
                if pending.starts(with: Array("--".utf8)) {
                    if inFile { inFile = false }
                    stage = .done
                    events.append(.end)
                    continue
                }
                guard let end = Self.find(Array("\r\n\r\n".utf8), in: pending) else {
                    if pending.count > Self.headerLimit { stage = .done; events.append(.end) }
                    return events
                }
                let headers = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                let name = Self.fileName(in: headers)
                inFile = name != nil
                if inFile { events.append(.file(name)) }
                stage = .body
            case .body:
                if let found = Self.find(delimiter, in: pending) {
                    if inFile && found > 0 { events.append(.bytes(Array(pending[..<found]))) }
                    pending.removeFirst(found + delimiter.count)
                    stage = .headers
                } else {
                    // All but what could be the start of a delimiter is content.
                    let safe = pending.count - (delimiter.count - 1)
                    if safe > 0 {
                        if inFile { events.append(.bytes(Array(pending[..<safe]))) }
                        pending.removeFirst(safe)
                    }
                    return events
                }
            }
        }
    }

    /// `filename="…"` of a part's `Content-Disposition`.
    static func fileName(in headers: String) -> String? {
        for line in headers.split(separator: "\r\n") where line.lowercased().hasPrefix("content-disposition:") {
            guard let range = line.range(of: "filename=\"") else { return nil }
            let rest = line[range.upperBound...]
            guard let close = rest.firstIndex(of: "\"") else { return nil }
            let name = String(rest[..<close])
            return name.isEmpty ? nil : name
        }
        return nil
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            guard let first = haystack[index...last].firstIndex(of: needle[0]) else { return nil }
            if haystack[first..<(first + needle.count)].elementsEqual(needle) { return first }
            index = first + 1
        }
        return nil
    }
}

/// A `multipart/form-data` request body read as it arrives: its parts one after another, and
/// the bytes of the file under way as ``IncomingBytes``, for one operation to append whole
/// (``AppendUploadStream``) with no hop to another thread per piece. Used by the request's
/// thread, and by one thread at a time that it waits for.
final class MultipartBody: @unchecked Sendable {
    private let exchange: HTTPExchange
    private var reader: MultipartReader
    private var events: [MultipartReader.Event] = []
    private var piece: [UInt8] = []
    private var used = 0
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var over = false
    /// Whether the client stopped before the body's end (its connection gone).
    private(set) var cutOff = false

    init(_ exchange: HTTPExchange, boundary: String) {
        self.exchange = exchange
        reader = MultipartReader(boundary: boundary)
    }

    /// The next event of the body, read as needed; `nil` once the body has ended (with or
    /// without its closing boundary) or was cut off.
    func next() -> MultipartReader.Event? {
        while events.isEmpty {
            guard !over else { return nil }
            let count = buffer.withUnsafeMutableBytes { exchange.read(into: $0) }
            if count <= 0 {
                (over, cutOff) = (true, count < 0)
                return nil
            }
            events = reader.feed(buffer[..<count])
        }
        return events.removeFirst()
    }

    /// Whether the file under way was read to the end of its part (another part or the closing
    /// boundary follows), rather than cut short by the client or left part-read by its reader.
    var fileIsWhole: Bool {
        guard used == piece.count, let event = next() else { return false }
        events.insert(event, at: 0)
        return !Self.isBytes(event)
    }

    /// The rest of the file under way, as it arrives.
    var currentFile: some IncomingBytes { FileBytes(body: self) }

    private struct FileBytes: IncomingBytes, @unchecked Sendable {
        let body: MultipartBody
        func read(into buffer: UnsafeMutableRawBufferPointer) -> Int { body.readFile(into: buffer) }
    }

    /// Up to `buffer.count` bytes of the file under way; 0 where its part ends; negative when
    /// the body was cut off.
    private func readFile(into destination: UnsafeMutableRawBufferPointer) -> Int {
        while used == piece.count {
            guard let event = next() else { return cutOff ? -1 : 0 }
            guard case .bytes(let bytes) = event else {
                events.insert(event, at: 0)
                return 0
            }
            (piece, used) = (bytes, 0)
        }
        let count = min(destination.count, piece.count - used)
        piece.withUnsafeBytes { source in
            destination.baseAddress!.copyMemory(from: source.baseAddress! + used, byteCount: count)
        }
        used += count
        return count
    }

    private static func isBytes(_ event: MultipartReader.Event) -> Bool {
        if case .bytes = event { return true }
        return false
    }
}
