import CofferCore
import CofferHTTPServer
import FileService
import CofferRuntime
import Foundation
import Synchronization

/// What the web front end's route sets share: the service, the configuration, the web
/// session (the page's downloads, thumbnails and uploads are its work), and the way every
/// route answers and waits.
final class WebContext: Sendable {
    let service: FileService
    let configuration: WebServer.Configuration
    /// Served on an address other than loopback (over TLS): WebDAV and share links only.
    var isRemote: Bool { !ServedHost.isLoopback(configuration.address) }
    /// The session HTTP requests (downloads, thumbnails, tus) are read in.
    let session: Session

    init(service: FileService, configuration: WebServer.Configuration) throws(CofferError) {
        self.service = service
        self.configuration = configuration
        session = try service.openSession(SessionOptions(frontEnd: "web", language: configuration.language, isLongLived: true))
    }

    /// Headers every answer of the page's carries: it may load only its own script, style and
    /// images, may talk only to this server, and may not be framed.
    static let pagePolicy = "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
        + "img-src 'self' blob: data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
        + "frame-ancestors 'self'\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
        + "Cross-Origin-Opener-Policy: same-origin\r\nCache-Control: no-store\r\n"

    /// What share pages carry: no script at all; images and forms of this server only; never
    /// framed, never referred.
    static let sharePolicy = "Content-Security-Policy: default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; "
        + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'\r\nX-Content-Type-Options: nosniff\r\n"
        + "Referrer-Policy: no-referrer\r\nCache-Control: no-store\r\nX-Robots-Tag: noindex\r\n"

    @discardableResult
    func respond(_ exchange: HTTPExchange, _ status: Int, text: String, headers: String = "") -> Int {
        exchange.answer(status, Array(text.utf8), type: "text/plain; charset=utf-8", headers: Self.pagePolicy + headers)
    }

    func failure(_ exchange: HTTPExchange, _ error: CofferError, language: Language) -> Int {
        // The kind as every front end names it (RPC's `data.kind`), for programs and tests.
        respond(exchange, HTTPRules.status(for: error.kind), text: error.userMessage(in: language).description,
                headers: "X-Coffer-Error: \(error.kind.identifier)\r\n")
    }

    func language(of exchange: HTTPExchange) -> Language {
        exchange.prefersChinese() ? .simplifiedChinese : configuration.language
    }

    /// Runs `body` as work of `session` (the web session unless given) and waits for it here,
    /// on the server's thread; stopping the server cancels it (a thumbnail's decoder is
    /// killed), so no worker is held.
    func blocking<T: Sendable>(in session: Session? = nil,
                               _ body: @escaping @Sendable () async throws(CofferError) -> T) -> Result<T, CofferError> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, CofferError>?>(nil)
        (session ?? self.session).start {
            let outcome = await Result<T, CofferError>(catching: body)
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Runs `body` as ``blocking(in:_:)`` does, and returns its outcome with the warnings its
    /// operations raised (the session's ``Session/reporting(_:)``).
    func reporting<T: Sendable>(in session: Session? = nil,
                                _ body: @escaping @Sendable () async throws(CofferError) -> T) -> Reported<Result<T, CofferError>> {
        let session = session ?? self.session
        let outcome = blocking(in: session) { () async throws(CofferError) -> Reported<Result<T, CofferError>> in
            await session.reporting { await Result<T, CofferError>(catching: body) }
        }
        switch outcome {
        case .success(let reported): return reported
        case .failure(let error): return Reported(.failure(error))
        }
    }

    /// `warnings` as `Coffer-Warning` headers, one each: its message in `language`,
    /// percent-encoded UTF-8 (a header is ASCII), for the page to decode and show.
    static let plainASCII = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    static func warningHeaders(_ warnings: [OperationWarning], language: Language) -> String {
        warnings.map { warning in
            let message = warning.message(language)
            // ASCII letters and digits only: `.alphanumerics` holds Chinese letters too, and a
            // header is ASCII.
            let encoded = message.addingPercentEncoding(withAllowedCharacters: Self.plainASCII) ?? ""
            return "Coffer-Warning: \(encoded)\r\n"
        }.joined()
    }

    /// The virtual path a request names in `?path=`, decoded, checked by the model.
    func virtualPath(_ exchange: HTTPExchange) -> Result<VirtualPath, CofferError> {
        // A NUL (`%00`) would end the decoded text early and name another item: refused whole.
        if exchange.query.range(of: "%00") != nil {
            return .failure(CofferError(.invalidName, detail: "a path may not hold a NUL character"))
        }
        guard let text = exchange.queryValue("path") else {
            return .failure(CofferError(.invalidArgument, detail: "no path"))
        }
        return Result { () throws(CofferError) in try VirtualPath(parsing: text) }
    }
}
