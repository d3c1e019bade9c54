import CofferCore
import CofferHTTP
import CofferRuntime
import Foundation

/// An upload in parts under way (`CreateMultipartUpload`), as S3 and the ledger name it.
struct S3Upload: Sendable, Equatable {
    var key: String
    var id: String
    /// When it was started (listings of uploads say; `nil` for one started here).
    var initiated: Date?
}

extension S3Client {
    /// Starts an upload in parts to `key`; the object's type and date go with it, as with a PUT.
    func startUpload(_ key: String, contentType: String?, modified: Date?,
                     metadata: [(name: String, value: String)] = []) throws(CofferError) -> S3Upload {
        var headers: [(name: String, value: String)] = []
        if let contentType { headers.append(("Content-Type", contentType)) }
        if let modified { headers.append(("X-Amz-Meta-Mtime", Self.mtimeText(modified))) }
        headers += metadata
        let document = try sendCollecting("POST", key: key, query: [("uploads", "")], headers: headers)
        guard let id = S3XML.firstText(of: "UploadId", in: document), !id.isEmpty else {
            throw CofferError(.ioError, detail: "the S3 server did not start an upload of “\(key)” in \(configuration.location)")
        }
        return S3Upload(key: key, id: id)
    }

    /// Sends part `number` (from 1) of `upload`; returns its ETag.
    func sendPart(_ number: Int, of upload: S3Upload, body: HTTPBody) throws(CofferError) -> String {
        let response = try send("PUT", key: upload.key, query: [("partNumber", "\(number)"), ("uploadId", upload.id)], body: body)
        guard let etag = response.header("ETag") else {
            throw CofferError(.ioError, detail: "the S3 server kept no part \(number) of “\(upload.key)”")
        }
        return etag
    }

    /// Makes the object of `upload` from its parts (their ETags in order). `condition` is
    /// sent as for a PUT: AWS honours it; Ceph RGW 16.2 does not (checked), so the backend
    /// looks just before.
    func finish(_ upload: S3Upload, parts: [String], condition: S3WriteCondition) throws(CofferError) {
        var xml = "<CompleteMultipartUpload>"
        for (index, etag) in parts.enumerated() {
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(Self.escapedXML(etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        var headers: [(name: String, value: String)] = [("Content-Type", "application/xml")]
        headers += Self.conditionHeaders(condition)
        let document = try sendCollecting("POST", key: upload.key, query: [("uploadId", upload.id)], headers: headers,
                                          body: .bytes(Array(xml.utf8)))
        // S3 may answer 200 and still fail the completion: the error is then in the document.
        if let code = S3XML.texts(in: document)?.first(where: { $0.path == "Error/Code" })?.text {
            throw CofferError(.ioError, detail: "the S3 server could not finish the upload of “\(upload.key)” (\(code))")
        }
    }

    /// Drops `upload` and the parts sent (S3 answers 404 `NoSuchUpload` once it is gone,
    /// which counts as done).
    func abandon(_ upload: S3Upload) throws(CofferError) {
        do throws(CofferError) {
            try send("DELETE", key: upload.key, query: [("uploadId", upload.id)])
        } catch where error.kind == .noSuchFile {
        }
    }

    /// The uploads in parts under way whose keys start with `prefix`, every page.
    func uploads(under prefix: String) throws(CofferError) -> [S3Upload] {
        var found: [S3Upload] = []
        var marker: (key: String, id: String)?
        repeat {
            var query: [(name: String, value: String)] = [("uploads", ""), ("prefix", prefix)]
            if let marker { query += [("key-marker", marker.key), ("upload-id-marker", marker.id)] }
            let document = try sendCollecting("GET", key: nil, query: query)
            guard let texts = S3XML.texts(in: document) else {
                throw CofferError(.ioError, detail: "the S3 server's list of uploads in \(configuration.location) could not be read")
            }
            var truncated = false
            var next: (key: String?, id: String?) = (nil, nil)
            for (path, text) in texts {
                switch path {
                case "ListMultipartUploadsResult/Upload/Key": found.append(S3Upload(key: text, id: ""))
                case "ListMultipartUploadsResult/Upload/UploadId": found[found.count - 1].id = text
                case "ListMultipartUploadsResult/Upload/Initiated": found[found.count - 1].initiated = Self.iso8601(text)
                case "ListMultipartUploadsResult/IsTruncated": truncated = text == "true"
                case "ListMultipartUploadsResult/NextKeyMarker": next.key = text
                case "ListMultipartUploadsResult/NextUploadIdMarker": next.id = text
                default: break
                }
            }
            if truncated, let key = next.key, let id = next.id { marker = (key, id) } else { marker = nil }
        } while marker != nil
        return found.filter { !$0.id.isEmpty }
    }

    /// Copies an object of `size` bytes in parts of `partSize` on the server
    /// (`UploadPartCopy`): how objects over 5 GiB are copied. Its type and date are read
    /// first and go with the copy, with its other metadata (tags); a failure drops what was copied.
    func copyInParts(from source: String, to destination: String, size: Int64, partSize: Int64) throws(CofferError) {
        let head = try send("HEAD", key: source)
        let metadata = head.headers.filter {
            $0.name.lowercased().hasPrefix(S3Attributes.headerPrefix) && $0.name.lowercased() != "x-amz-meta-mtime"
        }
        let upload = try startUpload(destination, contentType: head.header("Content-Type"),
                                     modified: head.header("X-Amz-Meta-Mtime").flatMap(Self.mtime), metadata: metadata)
        do throws(CofferError) {
            var parts: [String] = []
            var offset: Int64 = 0
            let copySource = "/\(configuration.location.bucket)/" + S3Encoding.encode(source, keepingSlashes: true)
            while offset < size {
                let end = min(size, offset + partSize)
                let document = try sendCollecting("PUT", key: destination, query: [
                    ("partNumber", "\(parts.count + 1)"), ("uploadId", upload.id),
                ], headers: [("X-Amz-Copy-Source", copySource), ("X-Amz-Copy-Source-Range", "bytes=\(offset)-\(end - 1)"),
                             ("X-Amz-Copy-Source-If-Match", Self.bare(head.header("ETag") ?? ""))], body: .bytes([]))
                guard let etag = S3XML.firstText(of: "ETag", in: document) else {
                    throw CofferError(.ioError, detail: "the S3 server did not copy part \(parts.count + 1) of “\(source)”")
                }
                parts.append(etag)
                offset = end
            }
            try finish(upload, parts: parts, condition: .none)
        } catch {
            try? abandon(upload)
            throw error
        }
    }

    /// Sends a request and returns its whole (small) answer document.
    func sendCollecting(_ method: String, key: String?, query: [(name: String, value: String)] = [],
                        headers: [(name: String, value: String)] = [], body: HTTPBody = .none) throws(CofferError) -> [UInt8] {
        var document: [UInt8] = []
        try send(method, key: key, query: query, headers: headers, body: body) { bytes in
            document += bytes
            return document.count < 64 << 20
        }
        return document
    }

    static func conditionHeaders(_ condition: S3WriteCondition) -> [(name: String, value: String)] {
        switch condition {
        case .none: []
        case .absent: [("If-None-Match", "*")]
        case .unchanged(let etag): [("If-Match", bare(etag))]
        }
    }

    static func escapedXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// How big files travel: above ``multipartThreshold`` a write is sent in parts, several
/// at once, and an object above ``copyPartLimit`` is copied in parts.
public struct S3Transfers: Sendable {
    /// Writes up to this size are one PUT.
    public var multipartThreshold: Int64 = 16 << 20
    /// The size of each part (S3's least is 5 MiB; parts grow for files over 10,000 parts).
    public var partSize: Int64 = 8 << 20
    /// Parts in flight at once.
    public var parallelParts = 10
    /// Objects up to this size are copied in one request (S3's limit is 5 GiB).
    public var copyPartLimit: Int64 = 5 << 30
    /// Reading a file through, the size of each block fetched ahead, and how many blocks
    /// are fetched at once: 8 MiB in flight, so a download of any size stays under 60 MB of
    /// resident memory. Larger blocks are faster (four of 8 MiB took 1 GiB a third less time)
    /// but pass that bound.
    public var readAheadBlock: Int64 = 2 << 20
    public var readAheadDepth = 4
    /// The most the local cache of file contents may take; files over half of it are not kept.
    public var cacheLimit: Int64 = 2 << 30

    public init() {}

    /// The part size for a file of `size` bytes: ``partSize``, grown to whole MiB when the
    /// file would need more than S3's 10,000 parts.
    func partSize(for size: Int64) -> Int64 {
        let least = (size + 9_999) / 10_000
        guard least > partSize else { return partSize }
        return (least + (1 << 20) - 1) / (1 << 20) * (1 << 20)
    }
}
