import CofferCore
import CofferHTTPServer
import CofferTestSupport
import CofferRuntime
import Foundation
import Synchronization
import Testing

/// Routes that show what the server's one request and answer type does.
private final class ProbeRoutes: HTTPRoutes {
    let port = Mutex(0)
    /// What the last `/file` answer's ``HTTPExchange/sendFile(descriptor:offset:length:)`` said.
    let fileSent = Mutex<Int64?>(nil)

    func answer(_ exchange: HTTPExchange) -> Int {
        switch exchange.path {
        case "/guarded":
            let access = HTTPGuard(served: ServedHost(address: "127.0.0.1", port: port.withLock { $0 }))
            guard access.isServed(exchange) else { return exchange.answer(421, text: "host") }
            guard access.originAllowed(exchange) else { return exchange.answer(403, text: "origin") }
            let shown = access.shownSecret(exchange, cookie: "key", query: "token")
            return exchange.answer(HTTPGuard.matches(shown, ["s3cret"]) ? 200 : 401, text: "token")
        case "/echo":
            // The one bounded body reader: 16 bytes at most.
            let body: [UInt8]
            switch exchange.readBody(limit: 16) {
            case .success(let bytes): body = bytes
            case .failure(.tooLarge): return exchange.answer(413, text: "too large")
            case .failure(.cutOff): return exchange.answer(400, text: "cut off")
            }
            return exchange.answer(200, body, type: "application/octet-stream",
                                   headers: "X-Query: \(exchange.queryValue("name") ?? "-")\r\nX-Cookie: \(exchange.cookie("k") ?? "-")\r\n")
        case "/chunks":
            exchange.respond(200, headers: "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n", length: nil)
            let body = exchange.chunked()
            for piece in ["one ", "two ", "three"] {
                _ = Array(piece.utf8).withUnsafeBytes { body.write($0.baseAddress!, $0.count) }
            }
            body.end()
            return 200
        case "/events":
            exchange.beginEventStream()
            exchange.sendEvent(Data("{\"n\":1}".utf8))
            exchange.sendEvent(Data("{\"n\":2}".utf8))
            return 200
        case "/error":
            return exchange.answer(HTTPRules.status(for: .fileExists), text: "taken")
        case "/method":
            return exchange.answer(200, text: "\(exchange.method) from \(exchange.remoteAddress)")
        case "/file":
            // `count` bytes of the file `path` from `from`, sent from the file by the front.
            let fd = open(exchange.queryValue("path") ?? "", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return exchange.answer(404, text: "no file") }
            defer { close(fd) }
            let from = exchange.queryValue("from").flatMap { Int64($0) } ?? 0
            let count = exchange.queryValue("count").flatMap { Int64($0) } ?? Int64(lseek(fd, 0, SEEK_END))
            exchange.respond(200, headers: "Content-Type: application/octet-stream\r\n", length: count)
            let sent = exchange.sendFile(descriptor: fd, offset: from, length: count)
            fileSent.withLock { $0 = sent }
            return 200
        default:
            return exchange.answer(404, text: "nothing")
        }
    }
}

@Suite(.ownsProcesses)
struct HTTPServerTests {
    func curl(_ arguments: [String]) throws -> TestProcess.Result {
        try TestProcess.run(["curl", "-sS", "--max-time", "20"] + arguments, timeout: 30)
    }

    @Test func oneServerAnswersBoundsBodiesChunksAndStreamsThenStops() throws {
        let server = try HTTPServer(address: "127.0.0.1", port: 0, threads: 4, routes: ProbeRoutes())
        let base = "http://127.0.0.1:\(server.port)"
        let echoed = try curl(["-D", "-", "--data-binary", "small body", "-H", "Cookie: k=v; other=w", "\(base)/echo?name=a%2Fb+c"])
        #expect(echoed.outputText.hasSuffix("small body"))
        #expect(echoed.outputText.contains("X-Query: a/b c") && echoed.outputText.contains("X-Cookie: v"), "\(echoed.outputText)")
        // Past the limit: refused, whether the length was announced or the body only ran on.
        #expect(try curl(["-o", "/dev/null", "-w", "%{http_code}", "--data-binary", String(repeating: "x", count: 17), "\(base)/echo"])
                    .outputText == "413")
        #expect(try curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked", "--data-binary",
                          String(repeating: "y", count: 5000), "\(base)/echo"]).outputText == "413")
        #expect(try curl(["\(base)/chunks"]).outputText == "one two three")
        #expect(try curl(["-N", "\(base)/events"]).outputText == "event: message\ndata: {\"n\":1}\n\nevent: message\ndata: {\"n\":2}\n\n")
        #expect(try curl(["-o", "/dev/null", "-w", "%{http_code}", "\(base)/error"]).outputText == "409")
        server.stop()
        #expect(try curl(["\(base)/echo"]).status != 0, "nothing listens once stopped")
    }

    /// One guard for every HTTP front end: the `Host` this server, an `Origin` its own, and
    /// the secret as a query value, a cookie or a bearer token.
    @Test func theGuardAsksHostOriginAndSecret() throws {
        let routes = ProbeRoutes()
        let server = try HTTPServer(address: "127.0.0.1", port: 0, threads: 4, routes: routes)
        defer { server.stop() }
        routes.port.withLock { $0 = server.port }
        let url = "http://127.0.0.1:\(server.port)/guarded"
        func status(_ extra: [String], _ address: String? = nil) throws -> String {
            try curl(["-o", "/dev/null", "-w", "%{http_code}"] + extra + [address ?? url]).outputText
        }
        #expect(try status(["-H", "Authorization: Bearer s3cret"]) == "200")
        #expect(try status(["-H", "Cookie: key=s3cret"]) == "200")
        #expect(try status([], url + "?token=s3cret") == "200")
        #expect(try status(["-H", "Authorization: Bearer wrong"]) == "401")
        #expect(try status([]) == "401")
        #expect(try status(["-H", "Host: localhost:\(server.port)", "-H", "Authorization: Bearer s3cret"]) == "200")
        #expect(try status(["-H", "Host: evil.example:\(server.port)", "-H", "Authorization: Bearer s3cret"]) == "421")
        #expect(try status(["-H", "Origin: http://evil.example", "-H", "Authorization: Bearer s3cret"]) == "403")
        #expect(try status(["-H", "Origin: null", "-H", "Authorization: Bearer s3cret"]) == "403")
        #expect(try status(["-H", "Origin: http://127.0.0.1:\(server.port)", "-H", "Authorization: Bearer s3cret"]) == "200")
        #expect(ServedHost.isLoopback("127.0.0.1") && ServedHost.isLoopback("::1") && ServedHost.isLoopback("localhost"))
        #expect(!ServedHost.isLoopback("0.0.0.0") && !ServedHost.isLoopback("192.168.1.20"))
    }

    /// Sends `request` as it is on one connection, ends the sending side, and reads what comes
    /// back until the server closes it (ten seconds at most).
    func exchangeRaw(_ request: String, port: Int) throws -> String {
        let socket = try #require(Loopback.connect(to: port))
        defer { close(socket) }
        var wait = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(request.utf8)
        #expect(bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
        shutdown(socket, Int32(SHUT_WR))
        var answer: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = piece.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            answer += piece[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// A HEAD's answer is its headers alone, whatever the route writes; the next request on
    /// the connection is read as a request, not mistaken for the end of a body.
    @Test func aHeadIsAnsweredWithHeadersAlone() throws {
        let server = try HTTPServer(address: "127.0.0.1", port: 0, threads: 2, routes: ProbeRoutes())
        defer { server.stop() }
        let answer = try exchangeRaw("HEAD /error HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                     + "GET /error HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(answer.components(separatedBy: "HTTP/1.1 409").count == 3, "\(answer)")
        #expect(answer.components(separatedBy: "taken").count == 2, "one body, the GET's: \(answer)")
    }

    /// A body that stops before its `Content-Length` is no body: the route is told so and
    /// acts on none of it.
    @Test func aBodyCutShortIsNotTakenForAWholeOne() throws {
        let server = try HTTPServer(address: "127.0.0.1", port: 0, threads: 2, routes: ProbeRoutes())
        defer { server.stop() }
        let answer = try exchangeRaw("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nabc", port: server.port)
        #expect(answer.hasPrefix("HTTP/1.1 400") && answer.hasSuffix("cut off"), "\(answer)")
    }

    /// WebDAV's `COPY` and `MOVE`, which CivetWeb 1.15 cannot parse, reach the routes through
    /// the server's front, between other requests on one connection (a chunked body among them);
    /// a client cannot pass another method off with the front's own headers.
    @Test func copyAndMoveReachTheRoutesAndNoClientCanForgeThem() throws {
        let server = try HTTPServer(address: "127.0.0.1", port: 0, threads: 2, routes: ProbeRoutes())
        defer { server.stop() }
        let answer = try exchangeRaw("COPY /method HTTP/1.1\r\nHost: 127.0.0.1\r\nDestination: /x\r\n\r\n"
                                     + "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                     + "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
                                     + "PATCH /method HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Coffer-Method: MOVE\r\n"
                                     + "X-Coffer-Front: guess\r\nX-Coffer-Peer: 10.1.2.3\r\nContent-Length: 0\r\n\r\n"
                                     + "MOVE /method HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(answer.contains("COPY from 127.0.0.1") && answer.contains("MOVE from 127.0.0.1"), "\(answer)")
        #expect(answer.contains("abcde"), "the chunked body between them: \(answer)")
        #expect(answer.contains("PATCH from 127.0.0.1") && !answer.contains("10.1.2.3"), "\(answer)")
        #expect(answer.components(separatedBy: "HTTP/1.1 200").count == 5, "four answers: \(answer)")
    }

    /// A file sent from the file by the front (`sendFile`) lands in its place among the other
    /// answers on one connection, whole or a range, whatever bytes it holds (the front's own
    /// marker among them); one that turned out shorter ends the connection after what there was.
    @Test func aFileSentFromTheFileKeepsItsPlaceAmongAnswers() throws {
        let routes = ProbeRoutes()
        let server = try HTTPServer(address: "127.0.0.1", port: 0, threads: 2, routes: routes)
        defer { server.stop() }
        let directory = TemporaryDirectory("http-sendfile")
        let path = directory.url("big.bin")
        var bytes = (0..<(300 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        bytes.replaceSubrange(1000..<1000, with: Array("\r\nX-Coffer-File: guess 1\r\n".utf8))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = "/file?path=\(path)"
        let answer = try exchangeRaw("GET \(file) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                     + "GET /method HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                     + "GET \(file)&from=1000&count=40 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                                     port: server.port)
        let whole = String(decoding: bytes, as: UTF8.self)
        #expect(answer.contains("\r\n\r\n" + whole + "HTTP/1.1 200"), "the whole file, then the next answer")
        #expect(answer.contains("GET from 127.0.0.1"))
        #expect(answer.hasSuffix("\r\n\r\n" + String(decoding: bytes[1000..<1040], as: UTF8.self)), "the range, last")
        // (The route hears how its file went just after the client does: waited for, 10 s at most.)
        func sentByRoute(_ expected: Int64) -> Int64? {
            let deadline = ContinuousClock.now + .seconds(10)
            while routes.fileSent.withLock({ $0 }) != expected && ContinuousClock.now < deadline { usleep(10_000) }
            return routes.fileSent.withLock { $0 }
        }
        #expect(sentByRoute(40) == 40)
        // Asked for more than the file holds: what there is, then the connection ends.
        let short = try exchangeRaw("GET \(file)&from=\(bytes.count - 10)&count=100 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                    + "GET /method HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: server.port)
        #expect(short.hasSuffix(String(decoding: bytes.suffix(10), as: UTF8.self)) && !short.contains("GET from"), "\(short.suffix(200))")
        #expect(sentByRoute(10) == 10)
    }

    /// `--tls-cert` and `--tls-key`: the same answers over HTTPS (the front ends TLS and CivetWeb
    /// sees plain HTTP), COPY and MOVE too; unusable files are a clear error before anything listens.
    @Test func tlsCarriesTheSameAnswers() throws {
        let directory = TemporaryDirectory("http-tls")
        let (certificate, key) = (directory.url("cert.pem"), directory.url("key.pem"))
        let made = try TestProcess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                                        "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"], timeout: 60)
        try #require(made.status == 0)
        let server = try HTTPServer(address: "127.0.0.1", port: 0, threads: 4, routes: ProbeRoutes(),
                                    tls: TLSFiles(certificate: certificate, key: key))
        defer { server.stop() }
        let base = "https://127.0.0.1:\(server.port)"
        let echoed = try curl(["--cacert", certificate, "--data-binary", "over tls", base + "/echo?name=x"])
        #expect(echoed.outputText == "over tls", "\(echoed.errorText)")
        let chunks = try curl(["--cacert", certificate, base + "/chunks", "-X", "COPY", "-o", "/dev/null", "-w", "%{http_code}"])
        #expect(chunks.outputText == "200")
        let file = directory.url("sent.txt")
        try Data(String(repeating: "從文件直接發送 ", count: 50_000).utf8).write(to: URL(fileURLWithPath: file))
        let sent = try curl(["--cacert", certificate, base + "/file?path=\(file)"])
        #expect(sent.outputText == String(repeating: "從文件直接發送 ", count: 50_000), "a file sent from the file, over TLS")
        let method = try curl(["--cacert", certificate, "-X", "MOVE", base + "/method"])
        #expect(method.outputText == "MOVE from 127.0.0.1", "\(method.errorText)")
        // Plain HTTP to it is told to use https.
        let plain = try curl(["http://127.0.0.1:\(server.port)/echo"])
        #expect(plain.outputText.contains("use https://"), "\(plain.errorText)")
        do {
            _ = try HTTPServer(address: "127.0.0.1", port: 0, threads: 2, routes: ProbeRoutes(),
                               tls: TLSFiles(certificate: directory.url("missing.pem"), key: key))
            Issue.record("a missing certificate was taken")
        } catch {
            #expect(error.reason.contains("missing.pem"), "\(error.reason)")
        }
    }

    @Test func aTakenPortIsAClearError() throws {
        let first = try HTTPServer(address: "127.0.0.1", port: 0, threads: 2, routes: ProbeRoutes())
        defer { first.stop() }
        #expect(throws: HTTPServerError.self) {
            try HTTPServer(address: "127.0.0.1", port: first.port, threads: 2, routes: ProbeRoutes())
        }
    }

    @Test func everyErrorKindHasOneStatus() {
        #expect(HTTPRules.status(for: .noSuchFile) == 404)
        #expect(HTTPRules.status(for: .fileExists) == 409 && HTTPRules.status(for: .changedSinceRead) == 409)
        #expect(HTTPRules.status(for: .readOnly) == 403 && HTTPRules.status(for: .outOfSpace) == 507)
        #expect(HTTPRules.status(for: .tooLarge) == 413 && HTTPRules.status(for: .invalidName) == 400)
        #expect(HTTPRules.status(for: .ioError) == 500)
    }
}

/// Paths reach Coffer as sent and are decoded once by the server, as CivetWeb decoded them.
@Test func pathsAreDecodedOnceAsCivetWebDid() {
    #expect(HTTPExchange.decodedOnce("/s/abc/a%20b%E7%AC%94") == "/s/abc/a b笔")
    #expect(HTTPExchange.decodedOnce("/a%2Fb") == "/a/b")
    #expect(HTTPExchange.decodedOnce("/100%") == "/100%" && HTTPExchange.decodedOnce("/%zz%4") == "/%zz%4")
    #expect(HTTPExchange.decodedOnce("/short%00er") == "/short")
    #expect(HTTPExchange.decodedOnce("/%25%32%35") == "/%25")
    #expect(HTTPExchange.decodedOnce("/bad%FF") == "/bad\u{FFFD}")
}
