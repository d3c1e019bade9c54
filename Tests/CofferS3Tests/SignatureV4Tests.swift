@testable import CofferS3
import CofferCore
import CofferRuntime
import Foundation
import Testing

/// Signature Version 4 against published and reference values: AWS's test suite's
/// `get-vanilla`, and two S3 requests whose signatures botocore's `S3SigV4Auth` computes
/// for the same keys, date and headers (a listing with spaces, Chinese and `/` in its
/// query, and a PUT with a body and user metadata).
struct SignatureV4Tests {
    let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    let date = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z

    func signature(_ request: S3Request) -> String? {
        request.header("Authorization")?.components(separatedBy: "Signature=").last
    }

    @Test func theTestSuitesVanillaGet() throws {
        var request = S3Request(method: "GET", host: "example.amazonaws.com", path: "/")
        // The suite's request has no payload header; the signer always adds one, so it is
        // left out here the way the suite's canonical request leaves it.
        let (canonical, signed) = SignatureV4.canonicalRequest(
            S3Request(method: "GET", host: "example.amazonaws.com", path: "/",
                      headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")]),
            payloadHash: Digest.emptyPayloadHash)
        #expect(signed == "host;x-amz-date")
        #expect(canonical == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
                + Digest.emptyPayloadHash)
        let scope = "20150830/us-east-1/service/aws4_request"
        let stringToSign = "AWS4-HMAC-SHA256\n20150830T123600Z\n\(scope)\n" + Digest.hex(try Digest.sha256(Array(canonical.utf8)))
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in ["20150830", "us-east-1", "service", "aws4_request"] { key = try Digest.hmacSHA256(key: key, Array(part.utf8)) }
        #expect(Digest.hex(try Digest.hmacSHA256(key: key, Array(stringToSign.utf8)))
                == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        // And the signer's own header for the same request, with its payload hash signed too.
        try SignatureV4(credentials: credentials, region: "us-east-1", service: "service")
            .sign(&request, payloadHash: Digest.emptyPayloadHash, at: date)
        #expect(request.header("Authorization")?.hasPrefix(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\(scope), SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=") == true)
    }

    @Test func anS3ListingWithEncodedNames() throws {
        var request = S3Request(method: "GET", host: "127.0.0.1:18480", path: "/my-bucket/a%20b/%E6%8A%A5%E5%91%8A.txt",
                                query: [("list-type", "2"), ("prefix", "a b/"), ("delimiter", "/")])
        #expect(request.encodedQuery == "delimiter=%2F&list-type=2&prefix=a%20b%2F")
        try SignatureV4(credentials: credentials, region: "us-east-1").sign(&request, payloadHash: Digest.emptyPayloadHash, at: date)
        #expect(signature(request) == "c03f61c03e85a6ecd0df3aa4c8c235aa75a8dcee3d9589d3743398995f3d9fd1")
        #expect(request.header("x-amz-date") == "20150830T123600Z")
    }

    @Test func anS3PutWithMetadata() throws {
        let body = Array("hello".utf8)
        let hash = Digest.hex(try Digest.sha256(body))
        #expect(hash == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        var request = S3Request(method: "PUT", host: "127.0.0.1:18480", path: "/my-bucket/notes.txt",
                                headers: [("Content-Type", "text/plain"), ("X-Amz-Meta-Mtime", "  1700000000.5 ")])
        try SignatureV4(credentials: credentials, region: "eu-west-1").sign(&request, payloadHash: hash, at: date)
        #expect(signature(request) == "1d3685829551edbee00e3ca52f7888331d8c6251b2c0082bc0fd1898a9a2d2e2")
        #expect(request.header("Authorization")?.contains("SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-mtime") == true)
    }

    @Test func aSessionTokenIsSentAndSigned() throws {
        var request = S3Request(method: "HEAD", host: "s3.us-east-1.amazonaws.com", path: "/b/k")
        let temporary = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: "token+/=")
        try SignatureV4(credentials: temporary, region: "us-east-1").sign(&request, payloadHash: "UNSIGNED-PAYLOAD", at: date)
        #expect(request.header("X-Amz-Security-Token") == "token+/=")
        #expect(request.header("Authorization")?.contains("x-amz-security-token") == true)
    }

    @Test func streamedHashesEqualWholeOnes() throws {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let stream = try StreamingSHA256()
        for start in stride(from: 0, to: bytes.count, by: 7_777) {
            try bytes[start..<min(start + 7_777, bytes.count)].withUnsafeBytes { try stream.update($0) }
        }
        #expect(try stream.finish() == Digest.sha256(bytes))
        #expect(Digest.hex(try Digest.sha256([])) == Digest.emptyPayloadHash)
    }

    @Test func encodingKeepsOnlyUnreservedCharacters() {
        #expect(S3Encoding.encode("a b+c%d/é~_.-") == "a%20b%2Bc%25d%2F%C3%A9~_.-")
        #expect(S3Encoding.encode("报告/2026 Q1.txt", keepingSlashes: true) == "%E6%8A%A5%E5%91%8A/2026%20Q1.txt")
    }

    @Test func credentialsNeverShowTheirSecrets() {
        let secret = S3Credentials(accessKeyID: "AKIAEXAMPLE1234", secretAccessKey: "TOPSECRETvalue", sessionToken: "SESSIONtoken")
        var dumped = ""
        dump(secret, to: &dumped)
        for shown in ["\(secret)", String(describing: secret), String(reflecting: secret), dumped, "\([secret])"] {
            #expect(!shown.contains("TOPSECRET") && !shown.contains("SESSION") && !shown.contains("AKIAEXAMPLE"), "\(shown)")
            #expect(shown.contains("1234"))
        }
    }
}
