import CofferCore
import CofferHTTPServer
import FileService
import Foundation

/// Resumable uploads with the tus 1.0 protocol (core, creation and termination) at `/tus/`,
/// over the same upload operations as RPC (``BeginUpload``, ``AppendUpload``, ``CommitUpload``,
/// ``AbortUpload``), in the web session: a client that lost its connection asks where the
/// upload stands (`HEAD`) and sends the rest (`PATCH`); the file appears, whole, when its last
/// byte arrives. Requests show the page's cookie or `Authorization: Bearer TOKEN`. An upload
/// outlives the server's process: a restarted server (the same container) goes on with it.
///
/// - `OPTIONS /tus/` — the versions, extensions and largest size;
/// - `POST /tus/` — a new upload: `Upload-Length`, and `Upload-Metadata` with `destination`
///   (a folder's virtual path) and `filename`; answers `201` and its `Location`;
/// - `HEAD /tus/ID` — `Upload-Offset` and `Upload-Length`;
/// - `PATCH /tus/ID` — bytes at `Upload-Offset` (`application/offset+octet-stream`);
/// - `DELETE /tus/ID` — the upload dropped.
struct TusUploads: Sendable {
    let web: WebContext

    static let tusVersion = "1.0.0"
    /// The largest upload announced (and taken).
    static let tusMaxSize: Int64 = 1 << 40

    func answer(_ exchange: HTTPExchange) -> Int {
        let (path, method) = (exchange.path, exchange.method)
        let language = web.language(of: exchange)
        let base = "Tus-Resumable: \(Self.tusVersion)\r\nCache-Control: no-store\r\n"
        if method == "OPTIONS" {
            return tusAnswer(exchange, 204, base + "Tus-Version: \(Self.tusVersion)\r\nTus-Extension: creation,termination\r\n"
                             + "Tus-Max-Size: \(Self.tusMaxSize)\r\n")
        }
        guard exchange.header("Tus-Resumable") == Self.tusVersion else {
            return tusAnswer(exchange, 412, base + "Tus-Version: \(Self.tusVersion)\r\n", text: "Tus-Resumable: \(Self.tusVersion) is required.")
        }
        let session = web.session
        let id = String(path.dropFirst("/tus/".count))
        if method == "POST" {
            guard id.isEmpty else { return tusAnswer(exchange, 405, base) }
            let announced = exchange.header("Upload-Length")
            guard let announced, let length = Int64(announced), length >= 0, length <= Self.tusMaxSize else {
                return tusAnswer(exchange, announced == nil ? 400 : 413, base,
                                 text: "Upload-Length is required, from 0 to \(Self.tusMaxSize).")
            }
            let metadata = Self.tusMetadata(exchange.header("Upload-Metadata") ?? "")
            guard let folderText = metadata["destination"], let name = metadata["filename"] else {
                return tusAnswer(exchange, 400, base, text: "Upload-Metadata needs destination and filename.")
            }
            let target: VirtualPath
            do throws(CofferError) {
                target = try VirtualPath(parsing: folderText).appending(name)
            } catch {
                return web.failure(exchange, error, language: language)
            }
            switch web.blocking({ () async throws(CofferError) in try await session.perform(BeginUpload(target, size: length, resumable: true)) }) {
            case .failure(let error): return web.failure(exchange, error, language: language)
            case .success(let upload):
                var warnings = ""
                if length == 0 {
                    let committed = web.reporting { () async throws(CofferError) in try await session.perform(CommitUpload(upload)) }
                    if case .failure(let error) = committed.value { return web.failure(exchange, error, language: language) }
                    warnings = WebContext.warningHeaders(committed.warnings, language: language)
                }
                return tusAnswer(exchange, 201, base + warnings + "Location: /tus/\(upload)\r\nUpload-Offset: 0\r\n")
            }
        }
        guard !id.isEmpty, !id.contains("/") else { return tusAnswer(exchange, 404, base) }
        let status: UploadStatus
        switch web.blocking({ () async throws(CofferError) in try await session.perform(ReadUploadStatus(id)) }) {
        case .success(let found): status = found
        case .failure: return tusAnswer(exchange, 404, base, text: "No such upload: it was finished, dropped, or left idle for an hour.")
        }
        switch method {
        case "HEAD":
            let length = status.expectedSize.map { "Upload-Length: \($0)\r\n" } ?? ""
            return tusAnswer(exchange, 200, base + "Upload-Offset: \(status.received)\r\n" + length)
        case "DELETE":
            _ = web.blocking { () async throws(CofferError) in try await session.perform(AbortUpload(id)) }
            return tusAnswer(exchange, 204, base)
        case "PATCH":
            guard exchange.contentType?.lowercased() == "application/offset+octet-stream" else {
                return tusAnswer(exchange, 415, base, text: "Content-Type: application/offset+octet-stream is required.")
            }
            guard let text = exchange.header("Upload-Offset"), let offset = Int64(text), offset == status.received else {
                return tusAnswer(exchange, 409, base + "Upload-Offset: \(status.received)\r\n",
                                 text: "Upload-Offset must be \(status.received), what the server has.")
            }
            return receiveTus(exchange, id: id, from: offset, status: status, base: base, language: language)
        default:
            return tusAnswer(exchange, 405, base)
        }
    }

    /// The body of a `PATCH`, appended as it arrives by one operation of the web session
    /// (``AppendUploadStream``, which audits where it began and what it brought); whatever
    /// arrived before a connection dropped is kept, for the next `PATCH` to go on from.
    private func receiveTus(_ exchange: HTTPExchange, id: String, from start: Int64, status: UploadStatus,
                            base: String, language: Language) -> Int {
        let session = web.session
        let body = RequestBody(exchange)
        let appended = web.blocking { () async throws(CofferError) in
            try await session.perform(AppendUploadStream(id, offset: start, body: body, destination: status.destination))
        }
        let offset: Int64
        switch appended {
        case .success(let received): offset = received
        case .failure(let error): return web.failure(exchange, error, language: language)
        }
        var warnings = ""
        if let expected = status.expectedSize, offset == expected {
            // What the commit could not do without failing goes to the page with the answer.
            let committed = web.reporting { () async throws(CofferError) in try await session.perform(CommitUpload(id)) }
            if case .failure(let error) = committed.value { return web.failure(exchange, error, language: language) }
            warnings = WebContext.warningHeaders(committed.warnings, language: language)
        }
        return tusAnswer(exchange, 204, base + warnings + "Upload-Offset: \(offset)\r\n")
    }

    private func tusAnswer(_ exchange: HTTPExchange, _ status: Int, _ headers: String, text: String = "") -> Int {
        exchange.answer(status, Array(text.utf8), type: "text/plain; charset=utf-8", headers: WebContext.pagePolicy + headers)
    }

    /// `Upload-Metadata`: comma-separated `key base64value` pairs.
    static func tusMetadata(_ header: String) -> [String: String] {
        var values: [String: String] = [:]
        for pair in header.split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first else { continue }
            let value = parts.count == 2 ? Data(base64Encoded: String(parts[1])).flatMap { String(data: $0, encoding: .utf8) } : ""
            if let value { values[String(key)] = value }
        }
        return values
    }
}

/// A request's body, for an operation that takes it as it arrives. Used only while its
/// request is being answered (the server's thread waits for the operation).
struct RequestBody: IncomingBytes {
    let exchange: HTTPExchange

    init(_ exchange: HTTPExchange) { self.exchange = exchange }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int { exchange.read(into: buffer) }
}
