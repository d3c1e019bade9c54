import CCofferHTTP
import CofferCore
import CofferHTTP
import CofferRuntime
import Foundation
import Synchronization

/// Signed requests to one bucket, retried where that is safe, with S3's answers turned into
/// `CofferError`s. Calls block the calling thread (the backend makes them off the
/// cooperative pool); every one is bounded by ``HTTPTimeouts``.
final class S3Client: Sendable {
    let configuration: S3Configuration
    let timeouts: HTTPTimeouts
    /// Extra certificate authorities (a test server's).
    let caFile: String?
    /// How many times a request that may be repeated is tried when the server is busy or
    /// the connection breaks, and the first wait between tries (four times longer each time).
    let attempts: Int
    let firstBackoff: Duration
    private let sessions = HTTPSessionPool()
    private let signer: SignatureV4
    /// How many requests of each method were sent (retries included): what tests count.
    let sent = Mutex<[String: Int]>([:])
    /// Whether the bucket's versioning was on when last asked, and when that was.
    let versioning = Mutex<(enabled: Bool, asked: ContinuousClock.Instant)?>(nil)

    init(_ configuration: S3Configuration, timeouts: HTTPTimeouts = HTTPTimeouts(), caFile: String? = nil,
         attempts: Int = 4, firstBackoff: Duration = .milliseconds(100)) {
        self.configuration = configuration
        self.timeouts = timeouts
        self.caFile = caFile
        self.attempts = max(1, attempts)
        self.firstBackoff = firstBackoff
        self.signer = SignatureV4(credentials: configuration.credentials, region: configuration.region)
    }

    /// Where a request for `key` (or the bucket itself, for `nil`) goes.
    func target(key: String?) -> (host: String, path: String) {
        let endpoint = configuration.endpoint
        let port = endpoint.port.map { ":\($0)" } ?? ""
        let host = endpoint.host ?? ""
        let encodedKey = key.map { "/" + S3Encoding.encode($0, keepingSlashes: true) } ?? ""
        switch configuration.addressing {
        case .path:
            return (host + port, "/" + configuration.location.bucket + encodedKey)
        case .virtual:
            return (configuration.location.bucket + "." + host + port, encodedKey.isEmpty ? "/" : encodedKey)
        }
    }

    /// Sends one request and returns the response once its body has gone to `onBody`.
    /// A body that can be sent again (none, bytes in memory, a range of a file) is, when the
    /// server is busy (500, 502, 503, 504, `SlowDown`) or the connection broke, up to
    /// ``attempts`` times with a growing wait; a streamed body is sent once.
    @discardableResult
    func send(_ method: String, key: String?, query: [(name: String, value: String)] = [],
              headers: [(name: String, value: String)] = [], body: HTTPBody = .none, payloadHash: String? = nil,
              onBody: (UnsafeRawBufferPointer) -> Bool = { _ in true }) throws(CofferError) -> HTTPResponse {
        let (host, path) = target(key: key)
        let hash: String
        switch body {
        case .none: hash = Digest.emptyPayloadHash
        case .bytes(let bytes):
            if let payloadHash { hash = payloadHash } else { hash = Digest.hex(try Digest.sha256(bytes)) }
        case .stream, .file: hash = payloadHash ?? "UNSIGNED-PAYLOAD"
        }
        let repeatable = body.isRepeatable
        var wait = firstBackoff
        /// Waits before the next try, each wait four times the one before.
        func pause() {
            Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
            wait *= 4
        }
        for attempt in 1...attempts {
            sent.withLock { $0[method, default: 0] += 1 }
            var request = S3Request(method: method, host: host, path: path, query: query, headers: headers)
            try signer.sign(&request, payloadHash: hash, at: Date())
            let query = request.encodedQuery
            let url = "\(configuration.endpoint.scheme ?? "https")://\(host)\(path)" + (query.isEmpty ? "" : "?" + query)
            let outcome = try sessions.withSession { (session) throws(HTTPFailure) -> HTTPResponse in
                try session.perform(method: method, url: url, headers: request.headers, body: body,
                                    timeouts: timeouts, caFile: caFile, onBody: onBody)
            }
            switch outcome {
            case .success(let response) where (200..<300).contains(response.status) || response.status == 304:
                return response
            case .success(let response):
                let busy = [500, 502, 503, 504].contains(response.status)
                if busy && repeatable && attempt < attempts {
                    pause()
                    continue
                }
                throw Self.error(status: response.status, body: response.errorBody, key: key, location: configuration.location)
            case .failure(let failure):
                if failure.bodyUnreadable { throw CofferError(.ioError, detail: "the data to send could not be read") }
                if failure.stoppedByCaller { throw CofferError(.cancelled) }
                if failure.isTransient && repeatable && attempt < attempts {
                    pause()
                    continue
                }
                throw Self.error(failure, endpoint: configuration.endpoint)
            }
        }
        throw CofferError(.ioError, detail: "S3 request not sent")
    }

    /// S3's answer as a `CofferError`. The failures a user can act on carry a detail code
    /// the message catalog words in each language (`s3-denied`, `s3-busy`, …); others name
    /// S3's status and code.
    static func error(status: Int, body: [UInt8], key: String?, location: S3Location) -> CofferError {
        let code = errorCode(in: body)
        let what = key.map { "“\($0)” in \(location)" } ?? "\(location)"
        switch (status, code) {
        case (404, "NoSuchBucket"?): return CofferError(.noSuchFile, detail: "s3-no-bucket")
        case (404, _): return CofferError(.noSuchFile)
        case (403, _), (401, _): return CofferError(.noPermission, detail: "s3-denied")
        case (412, _): return CofferError(.fileExists)
        case (416, _): return CofferError(.invalidArgument, detail: "the range asked of \(what) is past its end")
        case (500...599, _), (_, "SlowDown"?): return CofferError(.ioError, detail: "s3-busy")
        default: return CofferError(.ioError, detail: "S3 answered \(status) \(code ?? "") for \(what)")
        }
    }

    /// The `<Code>` of an S3 error document.
    private static func errorCode(in body: [UInt8]) -> String? {
        S3XML.firstText(of: "Code", in: body)
    }

    static func error(_ failure: HTTPFailure, endpoint: URL) -> CofferError {
        switch failure.code {
        case Int32(COFFER_HTTP_COULDNT_RESOLVE): return CofferError(.ioError, detail: "s3-name-unresolved")
        case Int32(COFFER_HTTP_COULDNT_CONNECT): return CofferError(.ioError, detail: "s3-unreachable")
        case Int32(COFFER_HTTP_TIMEOUT): return CofferError(.ioError, detail: "s3-timeout")
        case Int32(COFFER_HTTP_SSL), Int32(COFFER_HTTP_PEER_CERTIFICATE): return CofferError(.ioError, detail: "s3-certificate")
        case -1: return CofferError(.unsupported, detail: failure.message)
        default: return CofferError(.ioError, detail: "s3-broken")
        }
    }
}
