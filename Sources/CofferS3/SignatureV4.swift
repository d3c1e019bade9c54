import CofferCore
import CofferRuntime
import Foundation

/// Access keys for S3. Their `description` (what string interpolation, `print` and `dump`
/// show) names the access key's last four characters and never the secret or the session
/// token, so a key cannot reach a log, an audit entry or an error message by accident.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
                             CustomReflectable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String {
        "S3 credentials …\(accessKeyID.suffix(4))" + (sessionToken == nil ? "" : " (temporary)")
    }

    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["accessKeyID": "…\(accessKeyID.suffix(4))"]) }
}

/// One HTTP request to S3 as it is signed: the path already percent-encoded as it goes on
/// the wire, query parameters and headers as given.
struct S3Request: Sendable {
    var method: String
    /// `host[:port]`, as the `Host` header carries it.
    var host: String
    /// Percent-encoded, starting with `/`.
    var path: String
    var query: [(name: String, value: String)] = []
    var headers: [(name: String, value: String)] = []

    /// The value of the header `name` (any case), if set.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.lowercased() == name.lowercased() }
        headers.append((name, value))
    }

    /// The query string, encoded as it is signed (and so as it must be sent).
    var encodedQuery: String {
        query.map { (S3Encoding.encode($0.name), S3Encoding.encode($0.value)) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
}

/// AWS Signature Version 4, as S3 takes it in an `Authorization` header. The steps are the
/// published ones: a canonical request (method, path, sorted query, lower-cased sorted
/// headers, the payload's SHA-256), a string to sign with the date and scope, and an HMAC
/// chain from the secret key through the date, region and service.
struct SignatureV4 {
    var credentials: S3Credentials
    var region: String
    var service = "s3"

    /// Adds `x-amz-date`, `x-amz-content-sha256`, the session token if there is one, and
    /// `Authorization` to `request`. `payloadHash` is the body's SHA-256 in hex (or
    /// `UNSIGNED-PAYLOAD`).
    func sign(_ request: inout S3Request, payloadHash: String, at date: Date) throws(CofferError) {
        let stamp = Timestamp.basic(date)
        request.setHeader("Host", request.host)
        request.setHeader("X-Amz-Date", stamp)
        request.setHeader("X-Amz-Content-SHA256", payloadHash)
        if let token = credentials.sessionToken { request.setHeader("X-Amz-Security-Token", token) }
        let (canonical, signedHeaders) = Self.canonicalRequest(request, payloadHash: payloadHash)
        let day = String(stamp.prefix(8))
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", stamp, scope, Digest.hex(try Digest.sha256(Array(canonical.utf8)))]
            .joined(separator: "\n")
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] { key = try Digest.hmacSHA256(key: key, Array(part.utf8)) }
        let signature = Digest.hex(try Digest.hmacSHA256(key: key, Array(stringToSign.utf8)))
        request.setHeader("Authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
                          + "SignedHeaders=\(signedHeaders), Signature=\(signature)")
    }

    /// The canonical request and the list of signed headers.
    static func canonicalRequest(_ request: S3Request, payloadHash: String) -> (String, String) {
        var headers: [String: String] = [:]
        for (name, value) in request.headers where name.lowercased() != "authorization" {
            let key = name.lowercased()
            let trimmed = collapsingSpaces(value)
            headers[key] = headers[key].map { $0 + "," + trimmed } ?? trimmed
        }
        let names = headers.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(headers[$0]!)\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let canonical = [request.method, request.path, request.encodedQuery, canonicalHeaders, signedHeaders, payloadHash]
            .joined(separator: "\n")
        return (canonical, signedHeaders)
    }

    /// Leading and trailing spaces dropped, runs of spaces inside made one.
    private static func collapsingSpaces(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }
}

/// Percent-encoding as Signature Version 4 and S3 want it: every byte but the unreserved
/// characters (`A–Z a–z 0–9 - . _ ~`) as `%XX` in upper case, `/` kept in key paths.
enum S3Encoding {
    static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                encoded.append("/")
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                encoded.append("%")
                encoded.unicodeScalars.append(digits[Int(byte >> 4)])
                encoded.unicodeScalars.append(digits[Int(byte & 0x0F)])
            }
        }
        return encoded
    }
}
