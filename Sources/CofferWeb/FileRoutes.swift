import CofferCore
import CofferHTTPServer
import CofferPreview
import FileService
import Foundation

/// Files to the browser: `GET /content?path=…` (with `Range`, and `&download=1` for an
/// attachment) and `GET /thumbnail?path=…&size=…`. The path is a virtual path, opened and
/// read through the session (``OpenFile``, ``MakeThumbnail``) as every front end reads.
/// Share links send their files, thumbnails and zips through these too.
struct FileRoutes: Sendable {
    let web: WebContext

    /// Types a browser may show inline: images that cannot run script, and PDFs (shown by the
    /// browser's own viewer). Anything else (HTML, SVG, scripts…) is an attachment.
    static let inlineTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
                                           "application/pdf"]

    func content(_ exchange: HTTPExchange) -> Int {
        let language = web.language(of: exchange)
        let path: VirtualPath
        do throws(CofferError) { path = try web.virtualPath(exchange).get() } catch { return web.failure(exchange, error, language: language) }
        return sendFile(exchange, at: path, attachment: exchange.queryHas("download")).status
    }

    /// The file at `path`, whole or the range asked for, read through the session.
    /// `finishing` runs just before the piece holding the file's last byte is written (given
    /// the bytes sent with that piece), so that what it records is there before the client
    /// can ask again. Read in `session` (a share visitor's), else the web session; `extra`
    /// headers (WebDAV's `ETag`) go with the answer.
    /// - Returns: the status sent, the bytes sent, and whether the last byte of the file was among them.
    func sendFile(_ exchange: HTTPExchange, at path: VirtualPath, attachment forced: Bool, in visitor: Session? = nil,
                  headers extra: String = "", finishing: ((Int64) -> Void)? = nil) -> (status: Int, sent: Int64, finished: Bool) {
        let language = web.language(of: exchange)
        let (service, session) = (web.service, visitor ?? web.session)
        let opened = web.blocking(in: session) { () async throws(CofferError) -> OpenedFile in try await session.perform(OpenFile(path)) }
        guard case .success(let file) = opened else {
            if case .failure(let error) = opened { return (web.failure(exchange, error, language: language), 0, false) }
            return (500, 0, false)
        }
        let node = file.node
        defer { _ = web.blocking(in: session) { () async throws(CofferError) in await file.close() } }
        let size = file.size
        var start: Int64 = 0, end = size - 1, status = 200
        if let range = exchange.range {
            guard let (first, last) = HTTPRules.byteRange(range, size: size) else {
                return (web.respond(exchange, 416, text: "", headers: "Content-Range: bytes */\(size)\r\n"), 0, false)
            }
            (start, end, status) = (first, last, 206)
        }
        let mime = service.registry.mimeType(of: node.typeIdentifier)
        let attachment = forced || !Self.inlineTypes.contains(mime)
        var headers = "Content-Type: \(attachment && !Self.inlineTypes.contains(mime) ? "application/octet-stream" : mime)\r\n"
            + "Content-Disposition: \(attachment ? "attachment" : "inline"); \(HTTPRules.dispositionName(node.name))\r\n"
            + "Accept-Ranges: bytes\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
            + "Referrer-Policy: no-referrer\r\n"
            // A user's file never runs as the page: sandboxed, in an origin of its own.
            + "Content-Security-Policy: sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; plugin-types application/pdf\r\n"
        if status == 206 { headers += "Content-Range: bytes \(start)-\(end)/\(size)\r\n" }
        headers += extra
        let length = size == 0 ? 0 : end - start + 1
        exchange.respond(status, headers: headers, length: length)
        if exchange.method == "HEAD" { return (status, 0, false) }
        var offset = start
        // A piece holding the file's last byte is about to go: what `finishing` records first.
        func sending(_ count: Int) {
            if end == size - 1 && offset + Int64(count) > end { finishing?(offset + Int64(count) - start) }
        }
        if let reader = try? file.directReader() {
            defer { reader.close() }
            // A file of this host: sent by the kernel from the file to the client where the
            // connection allows. The last piece of a download that records something before
            // its last bytes (a share's) goes below, so the record waits for it as before.
            let piece: Int64 = 1 << 20
            let kept = finishing != nil && end == size - 1 ? min(length, piece) : 0
            if length - kept > 0,
               let sent = reader.withDescriptor({ exchange.sendFile(descriptor: $0, offset: start, length: length - kept) }) ?? nil {
                offset += sent
                if sent < length - kept { return (status, sent, false) }  // the client went away
            }
            // Else (or for that last piece) read here, on this request's own thread, into one
            // buffer, and written from it (no hop to another thread per piece).
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(piece), alignment: 16)
            defer { buffer.deallocate() }
            while offset <= end && length > 0 {
                let wanted = Int(min(Int64(buffer.count), end - offset + 1))
                guard let count = try? reader.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted])),
                      count > 0 else { break }
                sending(count)
                guard exchange.write(UnsafeRawBufferPointer(rebasing: buffer[..<count])) else { break }  // the browser went away
                offset += Int64(count)
            }
        } else {
            // Another backend's file (S3's): one task of the session reads ahead, a piece at a
            // time, while this thread writes.
            let pieces = RemoteRead(file, from: start, through: end, in: session)
            defer { pieces.stop() }
            while length > 0, let bytes = pieces.next() {
                sending(bytes.count)
                guard exchange.write(bytes) else { break }  // the browser went away
                offset += Int64(bytes.count)
            }
        }
        // Finished: the file's last byte went out (an empty file's none at all).
        return (status, offset - start, offset > end && end == size - 1)
    }

    func thumbnail(_ exchange: HTTPExchange) -> Int {
        let language = web.language(of: exchange)
        let path: VirtualPath
        do throws(CofferError) { path = try web.virtualPath(exchange).get() } catch { return web.failure(exchange, error, language: language) }
        let pixels = exchange.queryValue("size").flatMap(Int.init) ?? ThumbnailSize.normal.pixels
        return thumbnail(exchange, of: path, pixels: pixels, language: language)
    }

    func thumbnail(_ exchange: HTTPExchange, of path: VirtualPath, pixels: Int, in visitor: Session? = nil,
                   language: Language) -> Int {
        let session = visitor ?? web.session
        switch web.blocking(in: session, { () async throws(CofferError) in try await session.perform(MakeThumbnail(path, pixels: pixels)) }) {
        case .success(let thumbnail):
            return exchange.answer(200, thumbnail.png, type: "image/png", headers: WebContext.pagePolicy)
        case .failure(let error) where [.corruptFile, .tooLarge, .unsupported].contains(error.kind):
            // A file that has no thumbnail is not a failed request: the page shows its icon.
            return exchange.answer(204, [], type: nil, headers: WebContext.pagePolicy + "X-Coffer-No-Thumbnail: \(error.kind.identifier)\r\n")
        case .failure(let error):
            return web.failure(exchange, error, language: language)
        }
    }
}
