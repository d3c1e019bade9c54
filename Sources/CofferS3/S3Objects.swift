import CofferCore
import CofferHTTP
import Foundation
import Synchronization

/// What a `HEAD` or a listing says of an object.
struct S3Object: Sendable, Equatable {
    var key: String
    var size: Int64
    var etag: String
    /// The object's own modification time (`X-Amz-Meta-Mtime`, as rclone writes it, or
    /// s3fs's lower-case form), else when S3 stored it.
    var modified: Date
    /// The object's user metadata (`x-amz-meta-NAME`: lowercase `NAME` to its value), from a
    /// `HEAD` or `GET`; a listing gives none.
    var metadata: [String: String] = [:]
    /// The version of the object (`x-amz-version-id`), in a bucket whose versioning is or
    /// was on; `null` for an object written before it was.
    var versionID: String?
}

/// A page of `ListObjectsV2`.
struct S3Listing: Sendable {
    var objects: [S3Object] = []
    /// With a delimiter: the prefixes the keys share up to it (folders), ending in it.
    var commonPrefixes: [String] = []
    /// Where the next page starts; `nil` on the last one.
    var continuation: String?
}

/// The conditions a write may carry.
enum S3WriteCondition: Sendable {
    case none
    /// Only if nothing is at the key (`If-None-Match: *`): a create that cannot replace.
    case absent
    /// Only if the object is still the one read (`If-Match: ETag`): a replace that cannot
    /// lose another writer's update.
    case unchanged(etag: String)
}

extension S3Client {
    /// The object at `key`, or `nil` when there is none.
    func head(_ key: String, versionID: String? = nil) throws(CofferError) -> S3Object? {
        do {
            let response = try send("HEAD", key: key, query: versionID.map { [("versionId", $0)] } ?? [])
            return Self.object(key, response)
        } catch where error.kind == .noSuchFile {
            return nil
        }
    }

    /// Bytes `range` of the object at `key` (all of it for `nil`), handed to `sink` as they
    /// arrive; `sink` returns `false` to stop (then `cancelled` is thrown).
    @discardableResult
    func get(_ key: String, range: Range<Int64>? = nil, ifMatch etag: String? = nil, versionID: String? = nil,
             into sink: (UnsafeRawBufferPointer) -> Bool) throws(CofferError) -> S3Object? {
        var headers: [(name: String, value: String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        if let etag { headers.append(("If-Match", Self.bare(etag))) }
        let response = try send("GET", key: key, query: versionID.map { [("versionId", $0)] } ?? [], headers: headers, onBody: sink)
        return Self.object(key, response)
    }

    /// Stores `body` at `key`, with its modification time in `X-Amz-Meta-Mtime` (seconds
    /// since 1970, as rclone writes it). A condition that fails is `fileExists`.
    @discardableResult
    func put(_ key: String, body: HTTPBody, contentType: String? = nil, modified: Date? = nil,
             metadata: [(name: String, value: String)] = [],
             condition: S3WriteCondition = .none) throws(CofferError) -> String? {
        var headers: [(name: String, value: String)] = []
        if let contentType { headers.append(("Content-Type", contentType)) }
        if let modified { headers.append(("X-Amz-Meta-Mtime", Self.mtimeText(modified))) }
        headers += metadata
        if case .none = condition {
        } else if keepsVersions() {
            // Ceph RGW 16.2 evaluates conditions wrongly in a bucket with versioning on (checked:
            // `If-Match` always fails, `If-None-Match: *` always succeeds): they are checked
            // here, just before. A writer slipping in between loses nothing: the bucket keeps
            // what it put as an older version.
            try check(condition, at: key)
        } else {
            headers += Self.conditionHeaders(condition)
        }
        return try send("PUT", key: key, headers: headers, body: body).header("ETag")
    }

    /// Copies the object at `source` to `destination` on the server (its metadata, the
    /// modification time included, goes with it). Objects up to 5 GiB.
    func copy(from source: String, to destination: String) throws(CofferError) {
        let bucket = configuration.location.bucket
        try send("PUT", key: destination, headers: [
            ("X-Amz-Copy-Source", "/\(bucket)/" + S3Encoding.encode(source, keepingSlashes: true)),
            ("X-Amz-Metadata-Directive", "COPY"),
        ])
    }

    /// Checks `condition` by looking (a `HEAD`), for servers that do not honour it themselves:
    /// `fileExists` when it does not hold.
    func check(_ condition: S3WriteCondition, at key: String) throws(CofferError) {
        switch condition {
        case .none: break
        case .absent: if try head(key) != nil { throw CofferError(.fileExists) }
        case .unchanged(let etag): if try head(key).map({ Self.bare($0.etag) }) != Self.bare(etag) { throw CofferError(.fileExists) }
        }
    }

    /// Removes the object at `key` (S3 answers the same whether it was there or not).
    func delete(_ key: String, versionID: String? = nil) throws(CofferError) {
        try send("DELETE", key: key, query: versionID.map { [("versionId", $0)] } ?? [])
    }

    /// Whether the bucket keeps older versions of its objects, asked at most once a minute; a
    /// bucket whose versioning cannot be read (not permitted, not implemented, not answering)
    /// is taken to keep none until it is asked again.
    func keepsVersions() -> Bool {
        let now = ContinuousClock.now
        if let known = versioning.withLock({ $0 }), now - known.asked < .seconds(60) { return known.enabled }
        let enabled = (try? versioningEnabled()) ?? false
        versioning.withLock { $0 = (enabled, now) }
        return enabled
    }

    /// Whether the bucket keeps older versions of its objects (its versioning is `Enabled`;
    /// never set, or `Suspended`, it does not).
    func versioningEnabled() throws(CofferError) -> Bool {
        let document = try sendCollecting("GET", key: nil, query: [("versioning", "")])
        guard let texts = S3XML.texts(in: document) else { throw CofferError(.ioError, detail: "s3-unreadable-answer") }
        return texts.contains { $0.path == "VersioningConfiguration/Status" && $0.text == "Enabled" }
    }

    /// The versions the bucket keeps of the objects under `prefix` (`ListObjectVersions`, its
    /// first 1,000): key, version ID and whether it is the current one. Delete markers are
    /// left out.
    func objectVersions(prefix: String) throws(CofferError) -> [(key: String, versionID: String, isLatest: Bool)] {
        let document = try sendCollecting("GET", key: nil, query: [("versions", ""), ("prefix", prefix), ("encoding-type", "url")])
        guard let texts = S3XML.texts(in: document) else { throw CofferError(.ioError, detail: "s3-unreadable-answer") }
        var found: [(key: String, versionID: String, isLatest: Bool)] = []
        for (path, text) in texts {
            switch path {
            case "ListVersionsResult/Version/Key": found.append((Self.urlDecoded(text), "", false))
            case "ListVersionsResult/Version/VersionId" where !found.isEmpty: found[found.count - 1].versionID = text
            case "ListVersionsResult/Version/IsLatest" where !found.isEmpty: found[found.count - 1].isLatest = text == "true"
            default: break
            }
        }
        return found
    }

    /// Turns the bucket's versioning on or (`Suspended`) off.
    func setVersioning(enabled: Bool) throws(CofferError) {
        let body = """
            <VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\
            <Status>\(enabled ? "Enabled" : "Suspended")</Status></VersioningConfiguration>
            """
        try send("PUT", key: nil, query: [("versioning", "")], body: .bytes(Array(body.utf8)))
        versioning.withLock { $0 = (enabled, ContinuousClock.now) }
    }

    /// Creates the bucket (tests and first use of an empty server).
    func createBucket() throws(CofferError) {
        try send("PUT", key: nil)
    }

    /// One page of the keys under `prefix`, from `continuation`; with `delimiter`, keys
    /// past it are folded into common prefixes.
    func list(prefix: String, delimiter: String? = "/", continuation: String? = nil,
              maxKeys: Int = 1000) throws(CofferError) -> S3Listing {
        // RGW 16.2 answers 500 to a prefix with a control character: the part before it is
        // asked instead, without a delimiter, and the keys are chosen and folded here.
        guard let cut = prefix.unicodeScalars.firstIndex(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return try listPage(prefix: prefix, delimiter: delimiter, continuation: continuation, maxKeys: maxKeys)
        }
        let asked = String(prefix.unicodeScalars[..<cut])
        var listing = S3Listing()
        var next = continuation
        var folded = Set<String>()
        repeat {
            let page = try listPage(prefix: asked, delimiter: nil, continuation: next, maxKeys: 1000)
            for object in page.objects where object.key.hasPrefix(prefix) {
                let rest = object.key.dropFirst(prefix.count)
                if let delimiter, let end = rest.range(of: delimiter) {
                    let common = prefix + rest[..<end.upperBound]
                    if folded.insert(common).inserted { listing.commonPrefixes.append(common) }
                } else {
                    listing.objects.append(object)
                }
            }
            next = page.continuation
        } while next != nil && listing.objects.isEmpty && listing.commonPrefixes.isEmpty
        listing.continuation = next
        return listing
    }

    private func listPage(prefix: String, delimiter: String?, continuation: String?,
                          maxKeys: Int) throws(CofferError) -> S3Listing {
        // Keys come URL-encoded: a key with a control character would otherwise make the listing
        // XML that no parser reads, and with it every listing above that key.
        var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix), ("max-keys", "\(maxKeys)"),
                                                      ("encoding-type", "url")]
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let continuation { query.append(("continuation-token", continuation)) }
        let document = try sendCollecting("GET", key: nil, query: query)
        guard let texts = S3XML.texts(in: document) else {
            throw CofferError(.ioError, detail: "s3-unreadable-answer")
        }
        var listing = S3Listing()
        var current: S3Object?
        var truncated = false
        for (path, text) in texts {
            switch path {
            case "ListBucketResult/Contents/Key":
                if let current { listing.objects.append(current) }
                current = S3Object(key: Self.urlDecoded(text), size: 0, etag: "", modified: .distantPast)
            case "ListBucketResult/Contents/Size": current?.size = Int64(text) ?? 0
            case "ListBucketResult/Contents/ETag": current?.etag = text
            case "ListBucketResult/Contents/LastModified": current?.modified = Self.iso8601(text) ?? .distantPast
            case "ListBucketResult/CommonPrefixes/Prefix": listing.commonPrefixes.append(Self.urlDecoded(text))
            case "ListBucketResult/IsTruncated": truncated = text == "true"
            case "ListBucketResult/NextContinuationToken": listing.continuation = text
            default: break
            }
        }
        if let current { listing.objects.append(current) }
        if !truncated { listing.continuation = nil }
        return listing
    }

    /// A key of a listing asked with `encoding-type=url`, decoded as form data, as the AWS
    /// SDKs decode it: `+` is a space (AWS may write one so; a `+` of the key comes as `%2B`,
    /// and RGW writes spaces as `%20`).
    static func urlDecoded(_ text: String) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text
    }

    /// An ETag without its quotes: Ceph RGW 16.2 compares `If-Match` with the bare value
    /// (a quoted one never matches there), and S3 accepts either.
    static func bare(_ etag: String) -> String {
        etag.count >= 2 && etag.hasPrefix("\"") && etag.hasSuffix("\"") ? String(etag.dropFirst().dropLast()) : etag
    }

    // MARK: Reading answers

    static func object(_ key: String, _ response: HTTPResponse) -> S3Object {
        let modified = (response.header("X-Amz-Meta-Mtime")).flatMap(mtime)
            ?? response.header("Last-Modified").flatMap(httpDate) ?? .distantPast
        var metadata: [String: String] = [:]
        for (name, value) in response.headers where name.lowercased().hasPrefix(S3Attributes.headerPrefix) {
            metadata[String(name.lowercased().dropFirst(S3Attributes.headerPrefix.count))] = value
        }
        return S3Object(key: key, size: response.header("Content-Length").flatMap { Int64($0) } ?? 0,
                        etag: response.header("ETag") ?? "", modified: modified, metadata: metadata,
                        versionID: response.header("X-Amz-Version-Id"))
    }

    /// rclone's `X-Amz-Meta-Mtime`: seconds since 1970 with up to nine decimals.
    static func mtimeText(_ date: Date) -> String {
        // Whole seconds and the fraction apart: scaling the whole time to nanoseconds in a
        // Double would round away the fraction's last digits.
        let time = date.timeIntervalSince1970
        var seconds = Int64(time.rounded(.down))
        var nanoseconds = Int64(((time - Double(seconds)) * 1e9).rounded())
        if nanoseconds == 1_000_000_000 { (seconds, nanoseconds) = (seconds + 1, 0) }
        guard nanoseconds != 0 else { return "\(seconds)" }
        var fraction = String(nanoseconds)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)"
    }

    static func mtime(_ text: String) -> Date? {
        Double(text.trimmingCharacters(in: .whitespaces)).map { Date(timeIntervalSince1970: $0) }
    }

    static func iso8601(_ text: String) -> Date? {
        try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: text.contains(".")))
    }

    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
