import CCivetWeb
import CofferCore
import CofferPreview
import FileService
import Foundation

/// Files to the browser: `GET /content?path=…` (with `Range`, and `&download=1` for an
/// attachment) and `GET /thumbnail?path=…&size=…`. The path is a virtual path, opened and
/// read through the session (``OpenFile``, ``MakeThumbnail``) as every front end reads.
extension WebHandler {
    /// Types a browser may show inline: images that cannot run script, and PDFs (shown by the
    /// browser's own viewer). Anything else (HTML, SVG, scripts…) is an attachment.
    static let inlineTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
                                           "application/pdf"]

    func content(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request) -> Int32 {
        let language = language(of: request)
        let path: VirtualPath
        do throws(CofferError) { path = try virtualPath(request).get() } catch { return failure(connection, error, language: language) }
        let forced = Self.value(coffer_web_query_value, request.query, "download") != nil
        return sendFile(connection, request, at: path, attachment: forced).status
    }

    /// The file at `path`, whole or the range asked for, read through the session.
    /// `finishing` runs just before the piece holding the file's last byte is written (given
    /// the bytes sent with that piece), so that what it records is there before the client
    /// can ask again. Read in `session` (a share visitor's), else the web session.
    /// - Returns: the status sent, the bytes sent, and whether the last byte of the file was among them.
    func sendFile(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request, at path: VirtualPath,
                  attachment forced: Bool, in visitor: Session? = nil,
                  finishing: ((Int64) -> Void)? = nil) -> (status: Int32, sent: Int64, finished: Bool) {
        let language = language(of: request)
        let (service, session) = (self.service, visitor ?? self.session)
        let opened = blocking(in: session) { () async throws(CofferError) -> OpenedFile in try await session.perform(OpenFile(path)) }
        guard case .success(let file) = opened else {
            if case .failure(let error) = opened { return (failure(connection, error, language: language), 0, false) }
            return (500, 0, false)
        }
        let node = file.node
        defer { _ = blocking(in: session) { () async throws(CofferError) in await file.close() } }
        let size = file.size
        var start: Int64 = 0, end = size - 1, status: Int32 = 200
        if let range = request.range.map({ String(cString: $0) }) {
            guard let (first, last) = Self.byteRange(range, size: size) else {
                return (respond(connection, 416, text: "", headers: "Content-Range: bytes */\(size)\r\n"), 0, false)
            }
            (start, end, status) = (first, last, 206)
        }
        let mime = service.registry.mimeType(of: node.typeIdentifier)
        let attachment = forced || !Self.inlineTypes.contains(mime)
        var headers = "Content-Type: \(attachment && !Self.inlineTypes.contains(mime) ? "application/octet-stream" : mime)\r\n"
            + "Content-Disposition: \(attachment ? "attachment" : "inline"); \(Self.dispositionName(node.name))\r\n"
            + "Accept-Ranges: bytes\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
            + "Referrer-Policy: no-referrer\r\n"
            // A user's file never runs as the page: sandboxed, in an origin of its own.
            + "Content-Security-Policy: sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; plugin-types application/pdf\r\n"
        if status == 206 { headers += "Content-Range: bytes \(start)-\(end)/\(size)\r\n" }
        let length = size == 0 ? 0 : end - start + 1
        _ = coffer_web_respond(connection, status, headers, length)
        if String(cString: request.method) == "HEAD" { return (status, 0, false) }
        var offset = start
        while offset <= end && length > 0 {
            let count = Int(min(Int64(1 << 20), end - offset + 1))
            let at = offset
            guard case .success(let bytes) = blocking(in: session, { () async throws(CofferError) -> [UInt8] in
                try await file.read(at: at, upTo: count)
            }), !bytes.isEmpty else { break }
            if end == size - 1 && offset + Int64(bytes.count) > end { finishing?(offset + Int64(bytes.count) - start) }
            let written = bytes.withUnsafeBytes { coffer_web_write(connection, $0.baseAddress, $0.count) }
            if written <= 0 { break }  // the browser went away
            offset += Int64(bytes.count)
        }
        // Finished: the file's last byte went out (an empty file's none at all).
        return (status, offset - start, offset > end && end == size - 1)
    }

    func thumbnail(_ connection: UnsafeMutableRawPointer, _ request: coffer_web_request) -> Int32 {
        let language = language(of: request)
        let path: VirtualPath
        do throws(CofferError) { path = try virtualPath(request).get() } catch { return failure(connection, error, language: language) }
        let pixels = Self.value(coffer_web_query_value, request.query, "size").flatMap(Int.init) ?? ThumbnailSize.normal.pixels
        return thumbnail(connection, of: path, pixels: pixels, language: language)
    }

    func thumbnail(_ connection: UnsafeMutableRawPointer, of path: VirtualPath, pixels: Int, in visitor: Session? = nil,
                   language: Language) -> Int32 {
        let session = visitor ?? self.session
        switch blocking(in: session, { () async throws(CofferError) in try await session.perform(MakeThumbnail(path, pixels: pixels)) }) {
        case .success(let thumbnail):
            _ = coffer_web_respond(connection, 200, Self.pagePolicy + "Content-Type: image/png\r\n", Int64(thumbnail.png.count))
            _ = thumbnail.png.withUnsafeBytes { coffer_web_write(connection, $0.baseAddress, $0.count) }
            return 200
        case .failure(let error) where [.corruptFile, .tooLarge, .unsupported].contains(error.kind):
            // A file that has no thumbnail is not a failed request: the page shows its icon.
            _ = coffer_web_respond(connection, 204, Self.pagePolicy + "X-Coffer-No-Thumbnail: \(error.kind.identifier)\r\n", -1)
            return 204
        case .failure(let error):
            return failure(connection, error, language: language)
        }
    }

    /// One range of `bytes=FIRST-LAST`, `bytes=FIRST-` or `bytes=-SUFFIX` (RFC 9110 §14.1.2);
    /// `nil` when it cannot be satisfied. Several ranges are answered as the first.
    static func byteRange(_ header: String, size: Int64) -> (Int64, Int64)? {
        guard header.hasPrefix("bytes="), size > 0 else { return nil }
        let first = header.dropFirst(6).split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let parts = first.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber) else { return nil }
            let suffix = Int64(parts[1]) ?? Int64.max
            guard suffix > 0 else { return nil }
            return (max(0, size - suffix), size - 1)
        }
        guard let start = Int64(parts[0]), start < size else { return nil }
        guard !parts[1].isEmpty else { return (start, size - 1) }
        // A last position past the end (even past what 64 bits hold) means the end (§14.1.2).
        guard parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber) else { return nil }
        let last = Int64(parts[1]) ?? Int64.max
        guard last >= start else { return nil }
        return (start, min(last, size - 1))
    }

    /// `filename="…"` in ASCII and `filename*=UTF-8''…` (RFC 6266) for the real name.
    static func dispositionName(_ name: String) -> String {
        let ascii = String(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ascii
        return "filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }
}
