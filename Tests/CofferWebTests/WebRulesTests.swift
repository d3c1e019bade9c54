@testable import CofferWeb
import CofferCore
import CofferHTTPServer
import CofferRuntime
import CofferTestSupport
import FileService
import Foundation
import Testing

@Suite struct WebRulesTests {
    @Test func byteRangesAsRFC9110WritesThem() {
        #expect(HTTPRules.byteRange("bytes=0-99", size: 1000)! == (0, 99))
        #expect(HTTPRules.byteRange("bytes=900-", size: 1000)! == (900, 999))
        // Past the end, even past 64 bits: to the end, never 416 (issue 32).
        #expect(HTTPRules.byteRange("bytes=0-99999999999999999999999", size: 1000)! == (0, 999))
        #expect(HTTPRules.byteRange("bytes=-99999999999999999999999", size: 1000)! == (0, 999))
        #expect(HTTPRules.byteRange("bytes=0-9x", size: 1000) == nil)
        #expect(HTTPRules.byteRange("bytes=-100", size: 1000)! == (900, 999))
        #expect(HTTPRules.byteRange("bytes=-5000", size: 1000)! == (0, 999))
        #expect(HTTPRules.byteRange("bytes=500-5000", size: 1000)! == (500, 999))
        // Several ranges: the first.
        #expect(HTTPRules.byteRange("bytes=0-9, 20-29", size: 1000)! == (0, 9))
        for unsatisfiable in ["bytes=1000-", "bytes=50-10", "bytes=-0", "items=0-1", "bytes=a-b", "bytes=0-9"] {
            #expect(HTTPRules.byteRange(unsatisfiable, size: unsatisfiable == "bytes=0-9" ? 0 : 1000) == nil, "\(unsatisfiable)")
        }
    }

    @Test func warningHeadersAreASCIIInEveryLanguage() {
        let warning = OperationWarning(attributesOf: "files:/报告.txt", notKept: ["user.xdg.tags"], because: .unsupported)
        for language in [Language.english, .simplifiedChinese] {
            let headers = WebContext.warningHeaders([warning], language: language)
            #expect(headers.hasPrefix("Coffer-Warning: ") && headers.hasSuffix("\r\n"))
            #expect(headers.unicodeScalars.allSatisfy { $0.isASCII }, "\(headers)")
            let value = headers.dropFirst("Coffer-Warning: ".count).trimmingCharacters(in: .newlines)
            #expect(value.removingPercentEncoding == warning.message(language))
        }
    }

    @Test func downloadNamesKeepTheirRealNameAndCannotBreakTheHeader() {
        #expect(HTTPRules.dispositionName("report.pdf") == "filename=\"report.pdf\"; filename*=UTF-8''report.pdf")
        let chinese = HTTPRules.dispositionName("报告 \"最终\".pdf")
        #expect(chinese.hasPrefix("filename=\"__ ____.pdf\"; "))
        #expect(chinese.contains("filename*=UTF-8''%E6%8A%A5%E5%91%8A%20%22%E6%9C%80%E7%BB%88%22.pdf"))
        #expect(!chinese.contains("\r") && !chinese.contains("\n"))
        let injected = HTTPRules.dispositionName("a\r\nSet-Cookie: x=1.txt")
        #expect(!injected.contains("\r") && !injected.contains("\n"))
    }

    @Test func tokensAreComparedWhole() {
        let token = String(repeating: "ab", count: 24)
        #expect(AccessToken.same(token, token))
        #expect(!AccessToken.same(String(token.dropLast()) + "c", token))
        #expect(!AccessToken.same(String(token.dropLast()), token))
        #expect(!AccessToken.same("", token))
    }

    @Test func aTokenIsKeptPrivateAndReplacedOnlyWhenAsked() throws {
        let directory = TemporaryDirectory("coffer-web-token")
        let store = AccessToken(path: directory.url("web-token"))
        let first = try store.current(renew: false)
        #expect(first.count == 48 && first.allSatisfy(\.isHexDigit))
        #expect(try store.current(renew: false) == first)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.url("web-token"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let second = try store.current(renew: true)
        #expect(second != first && store.read() == second)
        // A damaged file is not a token.
        try Data("short".utf8).write(to: URL(fileURLWithPath: directory.url("web-token")))
        #expect(store.read() == nil)
    }

    @Test func onlyTheServedAddressIsAHost() async throws {
        let directory = TemporaryDirectory("coffer-web-host")
        let service = try FileService.standard(container: try await Container.open(at: directory.url("c")))
        let handler = try WebHandler(service: service, configuration: WebServer.Configuration(language: .english, version: "1"),
                                     token: String(repeating: "0", count: 48), store: AccessToken(path: directory.url("t")))
        try handler.listening(on: 8790)
        #expect(handler.served.isNamed(by: "127.0.0.1:8790") && handler.served.isNamed(by: "localhost:8790"))
        for host in ["127.0.0.1", "127.0.0.1:8791", "evil.example:8790", "127.0.0.1.evil.example:8790", "", "LOCALHOST:8790x"] {
            #expect(!handler.served.isNamed(by: host), "\(host)")
        }
        #expect(!handler.served.isNamed(by: nil))
        await handler.web.session.close()
    }
}
