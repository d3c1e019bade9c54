public import CofferCore
import CofferHTTP
import CofferRuntime
import Foundation

/// Tags on S3 objects, as object metadata: `x-amz-meta-xdg-tags`, the bucket's counterpart of the
/// `user.xdg.tags` attribute (what S3 tools show as the object's `xdg-tags` metadata).
///
/// S3 changes an object's metadata only by copying the object onto itself with new metadata
/// (`x-amz-metadata-directive: REPLACE`); the copy is made only while the object is the one
/// looked at (`x-amz-copy-source-if-match`), so a write by another program in between is never
/// undone, and it keeps every other metadata entry and the content type. Folders are prefixes,
/// not objects: they carry no tags. Values are written as ``S3Attributes`` writes every
/// attribute (an RFC 2047 encoded word for anything but printable ASCII), and read back either way.
extension S3Backend: TaggingBackend {
    static let tagsHeader = "X-Amz-Meta-Xdg-Tags"

    public func tags(at path: VirtualPath) async throws -> [String] {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> [String] in
            guard !path.isRoot else { return [] }
            guard let response = try self.client.headResponse(self.key(path)) else {
                if try self.isFolder(path) { return [] }
                throw CofferError(.noSuchFile, path: path)
            }
            return FileTags.parse(S3Attributes.decodedValue(response.header(Self.tagsHeader) ?? ""))
        }
    }

    public func setTags(_ tags: [String], at path: VirtualPath) async throws {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
            let key = self.key(path)
            guard let response = try self.client.headResponse(key) else {
                if try self.isFolder(path) { throw CofferError(.unsupported, path: path, detail: "no-tags") }
                throw CofferError(.noSuchFile, path: path)
            }
            let size = response.header("Content-Length").flatMap { Int64($0) } ?? 0
            guard size <= self.transfers.copyPartLimit else { throw CofferError(.unsupported, path: path, detail: "no-tags") }
            var metadata = response.headers.filter {
                $0.name.lowercased().hasPrefix("x-amz-meta-") && $0.name.caseInsensitiveCompare(Self.tagsHeader) != .orderedSame
            }
            if !tags.isEmpty {
                metadata.append((Self.tagsHeader, S3Attributes.encodedValue(FileTags.format(tags))))
            }
            do throws(CofferError) {
                try self.client.replaceMetadata(of: key, etag: response.header("ETag") ?? "",
                                                contentType: response.header("Content-Type"), metadata: metadata)
            } catch where error.kind == .fileExists {
                // The object changed between the look and the copy: nothing was changed.
                throw CofferError.changedSinceRead(path, now: nil)
            }
        }
    }
}

extension S3Client {
    /// The answer to a `HEAD` of `key` (every header), or `nil` when there is no such object.
    func headResponse(_ key: String) throws(CofferError) -> HTTPResponse? {
        do {
            return try send("HEAD", key: key)
        } catch where error.kind == .noSuchFile {
            return nil
        }
    }

    /// Copies the object at `key` onto itself with `metadata` (and its content type), only while
    /// its ETag is still `etag`; `fileExists` when it is not.
    func replaceMetadata(of key: String, etag: String, contentType: String?,
                         metadata: [(name: String, value: String)]) throws(CofferError) {
        let bucket = configuration.location.bucket
        var headers: [(name: String, value: String)] = [
            ("X-Amz-Copy-Source", "/\(bucket)/" + S3Encoding.encode(key, keepingSlashes: true)),
            ("X-Amz-Metadata-Directive", "REPLACE"),
            ("X-Amz-Copy-Source-If-Match", Self.bare(etag)),
        ]
        if let contentType { headers.append(("Content-Type", contentType)) }
        headers += metadata
        // A failed condition (412) is `fileExists`, as for every conditional request.
        try send("PUT", key: key, headers: headers)
    }
}
