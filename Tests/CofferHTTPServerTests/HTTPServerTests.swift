import CofferCore
import CofferHTTPServer
import CofferTestSupport
import Foundation
import Testing

/// Routes that show what the server's one request and answer type does.
private final class ProbeRoutes: HTTPRoutes {
    func answer(_ exchange: HTTPExchange) -> Int {
        switch exchange.path {
        case "/echo":
            // The one bounded body reader: 16 bytes at most.
            guard let body = exchange.readBody(limit: 16) else { return exchange.answer(413, text: "too large") }
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
