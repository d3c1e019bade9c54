import CCivetWeb
import CofferRuntime
public import Foundation

/// One request being answered: what it says, its body as it arrives, and the answer written
/// back. Valid only during the ``HTTPRoutes`` call it is given to; used from that call's
/// thread, or from one thread at a time that call waits for.
public final class HTTPExchange: @unchecked Sendable {
    private let connection: UnsafeMutableRawPointer
    private let request: coffer_web_request

    init(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request) {
        self.connection = connection
        self.request = request
    }

    // MARK: The request

    /// `raw` with each `%XX` decoded, as CivetWeb decodes a path: a `%` without two hex digits
    /// stays, the path ends at a decoded NUL, and bytes that are not UTF-8 are repaired.
    public static func decodedOnce(_ raw: String) -> String {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let bytes = Array(raw.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            var byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) {
                byte = high << 4 | low
                index += 2
            }
            if byte == 0 { break }
            out.append(byte)
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    public private(set) lazy var method = String(cString: request.method)
    /// Whether this is a `HEAD`: its answer has headers alone, whatever a route writes after them.
    public private(set) lazy var isHead = method == "HEAD"
    /// The path as the request line has it, still percent-encoded (WebDAV decodes it name by
    /// name, so that an encoded `/` is told from a real one).
    public private(set) lazy var rawPath = String(cString: request.path)
    /// The path, decoded once (`%2F` is a `/` by now, and a `%00` ends it early: a shorter
    /// path, never another one).
    public private(set) lazy var path = Self.decodedOnce(rawPath)
    /// The query, as sent (not decoded), without its `?`; "" when there is none.
    public private(set) lazy var query = request.query.map { String(cString: $0) } ?? ""
    public var host: String? { request.host.map { String(cString: $0) } }
    public var origin: String? { request.origin.map { String(cString: $0) } }
    public var authorization: String? { request.authorization.map { String(cString: $0) } }
    public var range: String? { request.range.map { String(cString: $0) } }
    public var acceptLanguage: String? { request.accept_language.map { String(cString: $0) } }
    public var contentType: String? { request.content_type.map { String(cString: $0) } }
    /// `X-Forwarded-For`, which only a server told to trust its proxy reads.
    public var forwardedFor: String? { request.forwarded_for.map { String(cString: $0) } }
    /// The body's announced length; `nil` when not given.
    public var contentLength: Int64? { request.content_length >= 0 ? request.content_length : nil }
    /// The client's address as the socket sees it.
    public var remoteAddress: String { request.remote_address.map { String(cString: $0) } ?? "?" }

    /// Any header of the request, trimmed; `nil` when absent.
    public func header(_ name: String) -> String? {
        coffer_web_header(connection, name).map { String(cString: $0).trimmingCharacters(in: .whitespaces) }
    }

    /// The value of `name` in the query, decoded (`%2F`, `+`); `nil` when absent or over 8 KiB.
    public func queryValue(_ name: String) -> String? { Self.value(coffer_web_query_value, request.query, name) }

    /// Whether the query holds `name` at all (`?download`, `?download=1`).
    public func queryHas(_ name: String) -> Bool { queryValue(name) != nil }

    /// The value of cookie `name`; `nil` when the request has none.
    public func cookie(_ name: String) -> String? { Self.value(coffer_web_cookie_value, request.cookie, name) }

    /// The value of `name` in a form body (`application/x-www-form-urlencoded`), decoded.
    public static func formValue(_ form: String, _ name: String) -> String? {
        form.withCString { value(coffer_web_query_value, $0, name) }
    }

    /// The bearer token of `Authorization: Bearer TOKEN`, if that is what it says.
    public var bearerToken: String? {
        guard let header = authorization, header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst(7))
    }

    /// The language the client reads best of the two Coffer writes: Chinese when
    /// `Accept-Language` starts so, else `fallback`.
    public func prefersChinese() -> Bool { (acceptLanguage ?? "").lowercased().hasPrefix("zh") }

    private static func value(_ lookup: (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int) -> Int32,
                              _ source: UnsafePointer<CChar>?, _ name: String) -> String? {
        guard let source else { return nil }
        var buffer = [CChar](repeating: 0, count: 8192)
        let length = lookup(source, name, &buffer, buffer.count)
        return length >= 0 ? String(cBuffer: buffer) : nil
    }

    // MARK: The body

    /// Waits for some of the body and puts up to `buffer.count` bytes at its start.
    /// - Returns: how many; 0 at the end of the body; a negative number when it was cut off.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        Int(coffer_web_read(connection, buffer.baseAddress, buffer.count))
    }

    /// The whole body, when it is at most `limit` bytes and arrived whole. Every body a route
    /// reads whole comes through here, so none can make the server hold more than its limit,
    /// and none acts on part of what was sent.
    /// - Returns: the body; ``BodyFailure/tooLarge`` past `limit` (an announced length past it
    ///   is refused before anything is read), ``BodyFailure/cutOff`` when the client stopped
    ///   before the end (or before its `Content-Length`).
    public func readBody(limit: Int) -> Result<[UInt8], BodyFailure> {
        if let announced = contentLength, announced > Int64(limit) { return .failure(.tooLarge) }
        var body: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(into: $0) }
            if count < 0 { return .failure(.cutOff) }
            if count == 0 {
                if let announced = contentLength, Int64(body.count) != announced { return .failure(.cutOff) }
                return .success(body)
            }
            body += chunk[..<count]
            if body.count > limit { return .failure(.tooLarge) }
        }
    }

    /// Why ``readBody(limit:)`` has no body to give.
    public enum BodyFailure: Error, Sendable {
        /// Longer than the limit.
        case tooLarge
        /// Ended before it was whole.
        case cutOff
    }

    // MARK: The answer

    /// Writes the status line and headers (`lines`: `Name: value\r\n`…); `length` is the
    /// body's, `nil` for none announced (a 204, or a body that ends with the connection or
    /// is chunked).
    @discardableResult
    public func respond(_ status: Int, headers lines: String, length: Int64?) -> Bool {
        coffer_web_respond(connection, Int32(status), lines, length ?? -1) >= 0
    }

    /// Writes body bytes (none to a `HEAD`, whose answer ends with its headers).
    /// - Returns: `false` when the client is gone.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, !isHead else { return true }
        return coffer_web_write(connection, bytes.baseAddress, bytes.count) > 0
    }

    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { write($0) } }

    /// Sends `length` bytes of the open file `descriptor` from `offset` as the rest of the body,
    /// straight from the file to the client (the kernel's `sendfile`, by the server's front)
    /// rather than through a buffer: for a download of a local file, after ``respond(_:headers:length:)``.
    /// The descriptor stays the caller's.
    /// - Returns: the bytes sent (fewer when the client went away or the file shrank; the
    ///   connection is then closed), or `nil` when this connection cannot send a file so
    ///   (nothing was written: ``write(_:)-(UnsafeRawBufferPointer)`` the bytes instead).
    public func sendFile(descriptor: Int32, offset: Int64, length: Int64) -> Int64? {
        guard length > 0 else { return 0 }
        guard !isHead else { return length }  // (as `write` takes a HEAD's body: nothing is sent)
        let sent = coffer_web_send_file(connection, descriptor, offset, length)
        return sent == -2 ? nil : max(sent, 0)
    }

    @discardableResult
    public func write(_ data: Data) -> Bool { data.withUnsafeBytes { write($0) } }

    /// A whole answer: `body` with its length and `type` (none for an empty body).
    /// - Returns: `status`, for a route to return.
    @discardableResult
    public func answer(_ status: Int, _ body: [UInt8], type: String?, headers: String = "") -> Int {
        let typeLine = body.isEmpty || type == nil ? "" : "Content-Type: \(type!)\r\n"
        let noBody = status == 204 || status == 304
        respond(status, headers: headers + typeLine, length: noBody ? nil : Int64(body.count))
        if !noBody { write(body) }
        return status
    }

    /// A whole answer of plain text.
    @discardableResult
    public func answer(_ status: Int, text: String, headers: String = "") -> Int {
        answer(status, Array(text.utf8), type: "text/plain; charset=utf-8", headers: headers)
    }

    /// A body sent in HTTP/1.1 chunks, its length unknown when it starts.
    public func chunked() -> ChunkedBody { ChunkedBody(self) }

    /// Starts an event stream (`text/event-stream`): events follow with ``sendEvent(_:)``.
    @discardableResult
    public func beginEventStream(headers: String = "") -> Bool {
        respond(200, headers: headers + "Content-Type: text/event-stream\r\nConnection: close\r\n", length: nil)
    }

    /// One server-sent event of type `message`. - Returns: `false` when the client is gone.
    @discardableResult
    public func sendEvent(_ data: Data) -> Bool {
        var event = Data("event: message\ndata: ".utf8)
        event.append(data)
        event.append(contentsOf: Array("\n\n".utf8))
        return write(event)
    }
}

/// Writes an answer's body in HTTP/1.1 chunks (the answer says `Transfer-Encoding: chunked`).
public final class ChunkedBody {
    private let exchange: HTTPExchange
    /// The body's bytes sent so far (not counting the chunks' framing).
    public private(set) var sent: Int64 = 0
    /// Whether the client went away.
    public private(set) var failed = false

    init(_ exchange: HTTPExchange) { self.exchange = exchange }

    /// - Returns: `false` once the client is gone.
    public func write(_ bytes: UnsafeRawPointer, _ length: Int) -> Bool {
        guard !failed else { return false }
        guard length > 0 else { return true }
        // One write per chunk, its framing with it: three small sends would each be a packet.
        var framed = Array((String(length, radix: 16) + "\r\n").utf8)
        framed.reserveCapacity(framed.count + length + 2)
        framed += UnsafeRawBufferPointer(start: bytes, count: length)
        framed += [0x0D, 0x0A]
        if !exchange.write(framed) {
            failed = true
            return false
        }
        sent += Int64(length)
        return true
    }

    /// The last chunk: the body is complete.
    public func end() {
        if !failed { exchange.write(Array("0\r\n\r\n".utf8)) }
    }
}
