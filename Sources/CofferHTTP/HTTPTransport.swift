import CCofferHTTP
public import CofferCore
import CofferRuntime
import Foundation
import Synchronization

// HTTP for every part of Coffer that talks to a server (the S3 mount, transfers), through the
// system's libcurl, loaded only when the first request is made (`CCofferHTTP`).

/// What a request sends as its body.
public enum HTTPBody {
    case none
    case bytes([UInt8])
    /// `length` bytes, asked for in pieces: `read` fills the buffer and returns the count
    /// (0 at the end), or `nil` to stop the transfer (a cancelled upload).
    case stream(length: Int64, read: (UnsafeMutableRawBufferPointer) -> Int?)
    /// `length` bytes of the open file `descriptor` from `offset`, read with `pread`: a body
    /// that can be sent again (a retry starts from `offset`); it stops when `stop` says so.
    case file(descriptor: Int32, offset: Int64, length: Int64, stop: () -> Bool)

    /// Whether the body can be sent again when a try fails.
    public var isRepeatable: Bool {
        if case .stream = self { return false }
        return true
    }
}

/// A response: the status and headers; the body went to the request's sink.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// The last response's, after any redirects followed.
    public var headers: [(name: String, value: String)] = []
    /// The start of the body of an answer that is not a success (status 300 and above),
    /// which never reaches the request's sink.
    public var errorBody: [UInt8] = []
    /// Where the answer came from, after redirects.
    public var effectiveURL: String?

    public func header(_ name: String) -> String? {
        headers.last { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// How long a request may take to get going, and to stall.
public struct HTTPTimeouts: Sendable {
    /// To connect (TLS included).
    public var connect: Duration = .seconds(10)
    /// With no byte moving either way: a server that stops answering ends the request
    /// after this long instead of hanging it; a slow but moving transfer goes on.
    public var stall: Duration = .seconds(30)

    public init(connect: Duration = .seconds(10), stall: Duration = .seconds(30)) {
        self.connect = connect
        self.stall = stall
    }
}

/// One libcurl handle and its connections (kept alive between requests). Used by one
/// request at a time: ``HTTPSessionPool`` hands them out.
public final class HTTPSession {
    private let handle: UnsafeMutableRawPointer

    public init() throws(CofferError) {
        guard let handle = coffer_http_session_new() else {
            throw CofferError(.unsupported, detail: "libcurl (libcurl.so.4) could not be loaded")
        }
        self.handle = handle
    }

    deinit { coffer_http_session_free(handle) }

    /// Performs one request, blocking the calling thread. `onBody` gets the body of a
    /// successful response in pieces and returns `false` to stop it. With `maxRedirects`
    /// above 0, redirects are followed that many times at most, to `http` and `https` only.
    /// `onHead`, when given, sees the final response's status and headers before the first
    /// byte of a successful body reaches `onBody` (a download decides there whether the
    /// server honoured its range), and returns `false` to stop.
    public func perform(method: String, url: String, headers: [(name: String, value: String)], body: HTTPBody,
                        timeouts: HTTPTimeouts, caFile: String?, maxRedirects: Int = 0,
                        onHead: ((HTTPResponse) -> Bool)? = nil,
                        onBody: (UnsafeRawBufferPointer) -> Bool) throws(HTTPFailure) -> HTTPResponse {
        try withoutActuallyEscaping(onBody) { (onBody) throws(HTTPFailure) -> HTTPResponse in
            try perform(method: method, url: url, headers: headers, body: body, timeouts: timeouts, caFile: caFile,
                        maxRedirects: maxRedirects, exchange: Exchange(body: body, onHead: onHead, onBody: onBody))
        }
    }

    private func perform(method: String, url: String, headers: [(name: String, value: String)], body: HTTPBody,
                         timeouts: HTTPTimeouts, caFile: String?, maxRedirects: Int,
                         exchange: Exchange) throws(HTTPFailure) -> HTTPResponse {
        let lines = headers.map { "\($0.name): \($0.value)" }
        var error = [CChar](repeating: 0, count: 512)
        var effective = [CChar](repeating: 0, count: 4096)
        var status = 0
        let code: Int32 = withCStrings(lines) { headerPointers in
            method.withCString { methodPointer in
                url.withCString { urlPointer in
                    withOptionalCString(caFile) { caPointer in
                        headerPointers.withUnsafeBufferPointer { list in
                            var request = coffer_http_request()
                            request.method = methodPointer
                            request.url = urlPointer
                            request.headers = list.baseAddress
                            request.header_count = list.count
                            request.connect_timeout_ms = Int(timeouts.connect.components.seconds * 1000)
                            request.stall_timeout_s = max(1, Int(timeouts.stall.components.seconds))
                            request.ca_file = caPointer
                            request.max_redirects = maxRedirects
                            request.on_header = { context, bytes, length in
                                Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue().header(bytes, length)
                            }
                            request.on_body = { context, bytes, length in
                                Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue().receive(bytes, length)
                            }
                            request.response_context = Unmanaged.passUnretained(exchange).toOpaque()
                            switch body {
                            case .none:
                                request.body_length = -1
                            case .bytes(let bytes):
                                request.body_length = Int64(bytes.count)
                            case .stream(let length, _), .file(_, _, let length, _):
                                request.body_length = length
                            }
                            if request.body_length >= 0 {
                                request.body = { context, buffer, capacity in
                                    Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue().send(buffer, capacity)
                                }
                                request.body_context = Unmanaged.passUnretained(exchange).toOpaque()
                            }
                            var answered: Int = 0
                            let code = effective.withUnsafeMutableBufferPointer { url in
                                request.effective_url = url.baseAddress
                                request.effective_url_capacity = url.count
                                return coffer_http_perform(handle, &request, &answered, &error)
                            }
                            status = answered
                            return code
                        }
                    }
                }
            }
        }
        withExtendedLifetime(exchange) {}
        guard code == 0 else {
            let message = String(cBuffer: error)
            throw HTTPFailure(code: code, message: message, stoppedByCaller: exchange.stoppedByCaller,
                              bodyUnreadable: exchange.readFailed)
        }
        let answeredFrom = String(cBuffer: effective)
        return HTTPResponse(status: status, headers: exchange.headers, errorBody: exchange.errorBody,
                            effectiveURL: answeredFrom.isEmpty ? nil : answeredFrom)
    }

    /// The state one transfer's callbacks share.
    private final class Exchange {
        var body: HTTPBody
        let onHead: ((HTTPResponse) -> Bool)?
        let onBody: (UnsafeRawBufferPointer) -> Bool
        /// Whether the successful body has begun (and `onHead` been asked).
        var bodyBegun = false
        var headers: [(name: String, value: String)] = []
        var sent = 0
        var stoppedByCaller = false
        /// A file body could not be read (or ended early).
        var readFailed = false
        /// The status of the response being received, from its status line.
        var status = 0
        var errorBody: [UInt8] = []

        init(body: HTTPBody, onHead: ((HTTPResponse) -> Bool)?, onBody: @escaping (UnsafeRawBufferPointer) -> Bool) {
            self.body = body
            self.onHead = onHead
            self.onBody = onBody
        }

        func header(_ bytes: UnsafePointer<CChar>?, _ length: Int) -> Int {
            guard let bytes else { return length }
            let line = String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
            if line.hasPrefix("HTTP/") {
                headers.removeAll()  // a new response (after a redirect or a `100 Continue`)
                status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), line[line.index(after: colon)...]
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
            }
            return length
        }

        func receive(_ bytes: UnsafePointer<CChar>?, _ length: Int) -> Int {
            guard let bytes, length > 0 else { return length }
            let piece = UnsafeRawBufferPointer(start: bytes, count: length)
            if status >= 300 {
                if errorBody.count < 16_384 { errorBody += piece.prefix(16_384 - errorBody.count) }
                return length
            }
            if !bodyBegun {
                bodyBegun = true
                if let onHead, !onHead(HTTPResponse(status: status, headers: headers)) {
                    stoppedByCaller = true
                    return 0
                }
            }
            if onBody(piece) { return length }
            stoppedByCaller = true
            return 0
        }

        func send(_ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
            guard let buffer else { return 0 }
            switch body {
            case .none:
                return 0
            case .bytes(let bytes):
                let count = min(capacity, bytes.count - sent)
                bytes.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + sent, byteCount: count)
                }
                sent += count
                return count
            case .stream(_, let read):
                guard let count = read(UnsafeMutableRawBufferPointer(start: buffer, count: capacity)) else {
                    stoppedByCaller = true
                    return Int(bitPattern: UInt(COFFER_HTTP_ABORT))
                }
                return count
            case .file(let descriptor, let offset, let length, let stop):
                if stop() {
                    stoppedByCaller = true
                    return Int(bitPattern: UInt(COFFER_HTTP_ABORT))
                }
                let wanted = Int(min(Int64(capacity), length - Int64(sent)))
                guard wanted > 0 else { return 0 }
                var got: Int
                repeat { got = pread(descriptor, buffer, wanted, off_t(offset + Int64(sent))) } while got < 0 && errno == EINTR
                guard got > 0 else {
                    readFailed = true
                    return Int(bitPattern: UInt(COFFER_HTTP_ABORT))
                }
                sent += got
                return got
            }
        }
    }
}

/// A request that did not get an answer: libcurl's code and message.
public struct HTTPFailure: Error {
    public var code: Int32
    public var message: String
    /// The body's source or sink stopped it (cancellation).
    public var stoppedByCaller: Bool
    /// The request's file body could not be read.
    public var bodyUnreadable = false

    /// libcurl's codes callers tell apart.
    public static let nameUnresolved = Int32(COFFER_HTTP_COULDNT_RESOLVE)
    public static let unreachable = Int32(COFFER_HTTP_COULDNT_CONNECT)
    public static let timedOut = Int32(COFFER_HTTP_TIMEOUT)
    public static let tls = Int32(COFFER_HTTP_SSL)
    public static let certificate = Int32(COFFER_HTTP_PEER_CERTIFICATE)
    public static let unsupportedProtocol = Int32(1)  // CURLE_UNSUPPORTED_PROTOCOL
    public static let tooManyRedirects = Int32(COFFER_HTTP_TOO_MANY_REDIRECTS)

    /// Whether trying again may work: the server could not be reached or the connection broke.
    public var isTransient: Bool {
        [COFFER_HTTP_COULDNT_CONNECT, COFFER_HTTP_TIMEOUT, COFFER_HTTP_GOT_NOTHING, COFFER_HTTP_SEND_ERROR,
         COFFER_HTTP_RECV_ERROR, COFFER_HTTP_PARTIAL_FILE].map(Int32.init).contains(code)
    }
}

/// Sessions for requests made from many threads at once: each request takes one (or makes
/// one) and gives it back, so connections are reused.
public final class HTTPSessionPool: Sendable {
    private let idle = Mutex<[UnsafeSession]>([])

    private struct UnsafeSession: @unchecked Sendable { let session: HTTPSession }

    public init() {}

    public func withSession<T>(_ body: (HTTPSession) throws(HTTPFailure) -> T) throws(CofferError) -> Result<T, HTTPFailure> {
        let session: HTTPSession
        if let reused = idle.withLock({ $0.popLast()?.session }) { session = reused } else { session = try HTTPSession() }
        let result = Result { () throws(HTTPFailure) -> T in try body(session) }
        // A session whose transfer failed may hold a broken connection: libcurl drops those.
        idle.withLock { if $0.count < 16 { $0.append(UnsafeSession(session: session)) } }
        return result
    }
}

private func withOptionalCString<T>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let string else { return body(nil) }
    return string.withCString(body)
}
