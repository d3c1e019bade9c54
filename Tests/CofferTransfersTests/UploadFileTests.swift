import CofferCore
@testable import CofferTransfers
import CofferTestSupport
import FileService
import Foundation
import Testing

/// The upload tests need a Python with python-multipart (`.ci/run` gives CI one, in
/// `COFFER_TEST_PYTHON`, and requires them with `COFFER_REQUIRE_MULTIPART=1`).
let formsParsed: Bool = {
    let parses = TransferServer.parsesForms
    if !parses && ProcessInfo.processInfo.environment["COFFER_REQUIRE_MULTIPART"] == "1" {
        fatalError("COFFER_REQUIRE_MULTIPART=1, but \(TransferServer.python) has no python_multipart")
    }
    return parses
}()

@Suite(.serialized, .enabled(if: formsParsed, "needs a Python with python-multipart (COFFER_TEST_PYTHON)"), .ownsProcesses)
struct UploadFileTests {
    let directory = TemporaryDirectory("upload-file")
    let server: TransferServer
    let service: FileService
    let session: Session

    init() async throws {
        server = try TransferServer()
        service = try FileService.standard(container: try await Container.open(at: directory.url("c")))
        session = try service.openSession(SessionOptions(frontEnd: "test"))
    }

    func make(_ name: String, _ bytes: [UInt8]) throws -> VirtualPath {
        try FileManager.default.createDirectory(atPath: directory.url("c/Documents/UserFiles"), withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: directory.url("c/Documents/UserFiles/" + name)))
        return try VirtualPath(parsing: "/" + name)
    }

    func answer(_ result: UploadResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.answer.utf8)) as? [String: Any])
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        let text = (try? TestProcess.run(["sha256sum"], input: Data(bytes), timeout: 60))?.outputText ?? ""
        return String(text.prefix(64))
    }

    @Test func aFormCarriesTheFileTheFieldsAndTheNameAsBrowsersSendIt() async throws {
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = try make("年度 \"报告\".pdf", bytes)
        var form = UploadForm()
        form.field = "document"
        form.fields = [UploadForm.Field("title", "Q3"), UploadForm.Field("note", "第三季度")]
        let result = try await session.perform(UploadFile(path, to: server.url("/form"), form: form))
        #expect(result.status == 200)
        let parsed = try answer(result)
        #expect(parsed["fields"] as? [String: String] == ["title": "Q3", "note": "第三季度"])
        let file = try #require((parsed["files"] as? [[String: Any]])?.first)
        #expect(file["field"] as? String == "document")
        #expect(file["name"] as? String == "年度 %22报告%22.pdf")  // `"` escaped as browsers do
        #expect(file["size"] as? Int == bytes.count && file["sha256"] as? String == Self.sha256(bytes))
    }

    @Test func anASCIINameGoesWithTheRealOneInAFieldOfItsOwn() async throws {
        let path = try make("报告.txt", Array("text".utf8))
        var form = UploadForm()
        form.asciiNameField = "original_name"
        let parsed = try answer(try await session.perform(UploadFile(path, to: server.url("/form"), form: form)))
        #expect((parsed["files"] as? [[String: Any]])?.first?["name"] as? String == "__.txt")
        #expect((parsed["fields"] as? [String: String])?["original_name"] == "报告.txt")
    }

    @Test func aPutSendsTheBytesAloneAndIsTriedAgainWhenTheServerIsBusy() async throws {
        let bytes = Array(repeating: UInt8(7), count: 1_000_001)
        let path = try make("plain.bin", bytes)
        var form = UploadForm()
        form.put = true
        let parsed = try answer(try await session.perform(UploadFile(path, to: server.url("/flaky/one"), form: form)))
        #expect(parsed["size"] as? Int == bytes.count && parsed["sha256"] as? String == Self.sha256(bytes))
        // A POST that reached the server is not sent again: the failure is reported.
        await #expect(throws: CofferError.self) {
            try await session.perform(UploadFile(path, to: server.url("/missing"), form: UploadForm()))
        }
    }

    @Test func foldersAndOtherSchemesAreRefused() async throws {
        try FileManager.default.createDirectory(atPath: directory.url("c/Documents/UserFiles/Folder"), withIntermediateDirectories: true)
        await #expect(throws: CofferError.self) {
            try await session.perform(UploadFile(try VirtualPath(parsing: "/Folder"), to: server.url("/form")))
        }
        let path = try make("a.txt", [1])
        await #expect(throws: CofferError.self) { try await session.perform(UploadFile(path, to: "ftp://example.com/")) }
    }

    @Test func theASCIINameKeepsTheExtension() {
        #expect(MultipartBody.ascii("报告.txt") == "__.txt")
        #expect(MultipartBody.ascii("plain.txt") == "plain.txt")
        #expect(MultipartBody.escaped("a\"b\r\nc") == "a%22b%0D%0Ac")
    }
}
