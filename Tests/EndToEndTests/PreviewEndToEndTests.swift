import CofferTestSupport
import Foundation
import Testing

/// Previews and thumbnails through the built binary: the REPL's `preview` (with an image on
/// a terminal that shows them, never into a pipe) and `ls --thumbnails`, RPC's
/// `files/preview` and `files/thumbnail`, MCP's `read_media_file` with a thumbnail.
@Suite(.enabled(if: MediaFixtures.available,
                "needs a Python with Pillow (COFFER_TEST_PYTHON), vips (libvips-tools) and bsdtar (libarchive-tools)"),
       .ownsProcesses)
struct PreviewEndToEndTests {
    let directory = TemporaryDirectory("e2e-preview")
    var container: String { directory.url("container") }
    var thumbnails: String { directory.url("container/Library/Caches/Thumbnails") }

    /// A container whose `files:/m` holds the media files.
    func prepare() throws {
        _ = try CofferBinary.run(["--container", container, "-c", "ls"])
        try MediaFixtures.make(in: directory.url("container/Documents/UserFiles/m"))
    }

    func coffer(_ commands: String, environment: [String: String] = [:]) throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", "en", "-c", commands], environment: environment)
    }

    /// The PNG's width and height from its header.
    func dimensions(_ png: Data) -> (Int, Int)? {
        guard png.count > 24, png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        func number(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    @Test func previewPrintsTheFactsAndNoEscapesIntoAPipe() throws {
        try prepare()
        directory.make(["container/Documents/UserFiles/m/escape.txt": "\u{1B}[31mred\u{1B}]0;title\u{07}\n"])
        let result = try coffer("preview m/photo.jpg m/report.pdf m/notes.txt m/bundle.zip m/escape.txt",
                                environment: ["COFFER_IMAGES": "kitty"])
        #expect(result.status == 0, "\(result.errors)")
        for expected in ["Pixels:       640 × 480", "Orientation:  turned right (6)", "Taken:        2024-05-01 12:30:00",
                         "Camera:       Canon EOS R5", "Pages:      2", "Page size:  595 × 842 pt (A4)",
                         "Title:      Quarterly report", "Author:     Li Wei", "Encoding:  UTF-8", "Lines:     26",
                         "Begins:    line 1: 你好", "Entries:   3", "图片/照片.jpg"] {
            #expect(result.output.contains(expected), "missing “\(expected)” in:\n\(result.output)")
        }
        // No escape code reaches a pipe: neither an image nor the file's own (notes.txt has one).
        #expect(!result.output.contains("\u{1B}"))
        #expect(result.output.contains("Begins:    ␛[31mred␛]0;title␇"))
    }

    @Test func previewShowsTheThumbnailOnATerminalThatCan() throws {
        try prepare()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        // `script` gives the program a real terminal and copies what it writes, escapes and all.
        let command = [CofferBinary.url.path, "--container", container, "-c", "preview m/wide.png"]
            .map { "'\($0)'" }.joined(separator: " ")
        let result = try CofferBinary.run(["-qec", command, "/dev/null"], environment: ["COFFER_IMAGES": "kitty", "TERM": "xterm"],
                                          launcher: ["/usr/bin/env"], program: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(result.status == 0, "\(result.errors)")
        let start = try #require(result.output.range(of: "\u{1B}_Ga=T,f=100,"), "no kitty image in \(result.output.debugDescription)")
        // The pieces of base64 between the escapes make the thumbnail's PNG.
        var encoded = ""
        var rest = result.output[start.lowerBound...]
        while let open = rest.range(of: "\u{1B}_G"), let semicolon = rest[open.upperBound...].firstIndex(of: ";"),
              let close = rest[semicolon...].range(of: "\u{1B}\\") {
            encoded += rest[rest.index(after: semicolon)..<close.lowerBound]
            rest = rest[close.upperBound...]
        }
        let png = try #require(Data(base64Encoded: encoded))
        let size = try #require(dimensions(png))
        #expect(size == (256, 171))
    }

    @Test func listingWithThumbnailsMakesThemAndAOneOffCommandWaitsForThem() throws {
        try prepare()
        let listing = try coffer("ls m")
        let result = try coffer("ls --thumbnails m")
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == listing.output)
        let made = try FileManager.default.contentsOfDirectory(atPath: thumbnails + "/normal").filter { !$0.hasPrefix(".") }
        #expect(made.count == 10 && made.allSatisfy { $0.hasSuffix(".png") && $0.count == 36 })
        // The folder's manifest, beside them.
        #expect(try FileManager.default.contentsOfDirectory(atPath: thumbnails + "/normal/.coffer-folders").count == 1)
        // The corrupt JPEG, the bomb and the interlaced giant.
        #expect(try FileManager.default.contentsOfDirectory(atPath: thumbnails + "/fail/coffer-1.0").count == 3)
    }

    /// libvips and libarchive are never loaded by `coffer` itself: a preview decodes in a
    /// child process (issue 32), and a command without one loads nothing of them at all.
    @Test func libvipsAndLibarchiveAreLoadedOnlyInADecoder() throws {
        try prepare()
        // The dynamic loader names every object it maps (LD_DEBUG=files); the decoder, which
        // gets no LD_DEBUG and writes nowhere, is not in it.
        let plain = try coffer("ls -l m; info m/photo.jpg", environment: ["LD_DEBUG": "files"])
        #expect(plain.status == 0)
        #expect(!plain.errors.contains("libvips") && !plain.errors.contains("libarchive") && !plain.errors.contains("libglib"))
        let previewed = try coffer("preview m/photo.jpg m/bundle.zip", environment: ["LD_DEBUG": "files"])
        #expect(previewed.status == 0 && previewed.output.contains("640 × 480") && previewed.output.contains("docs/readme.txt"),
                "\(previewed.output)")
        #expect(!previewed.errors.contains("libvips") && !previewed.errors.contains("libarchive"))
        // Once a folder's thumbnails are made, listing it with thumbnails loads none of them:
        // its manifest tells that every one is current.
        #expect(try coffer("ls --thumbnails m").status == 0)
        let again = try coffer("ls --thumbnails m", environment: ["LD_DEBUG": "files"])
        #expect(again.status == 0)
        #expect(!again.errors.contains("libvips") && !again.errors.contains("libglib"))
    }

    @Test func rpcAnswersPreviewsAndThumbnails() async throws {
        try prepare()
        let rpc = try RPCProcess(container: container)
        _ = try await rpc.awaitCall("initialize", ["capabilities": [:]])
        let preview = try #require(result(try await rpc.awaitCall("files/preview", ["path": "m/report.pdf"])))
        #expect(preview["kind"] as? String == "document")
        let document = preview["document"] as? [String: Any]
        #expect(document?["pages"] as? Int == 2 && document?["title"] as? String == "Quarterly report")
        #expect((preview["node"] as? [String: Any])?["name"] as? String == "report.pdf")
        let answer = try await rpc.awaitCall("files/preview", ["path": "m/bundle.tar.gz"])
        let archive = try #require(result(answer), "\(answer)")
        #expect((archive["archive"] as? [String: Any])?["entries"] as? Int == 30)

        let thumbnail = try #require(result(try await rpc.awaitCall("files/thumbnail", ["path": "m/wide.webp", "size": 256])))
        #expect(thumbnail["mimeType"] as? String == "image/png")
        #expect(thumbnail["width"] as? Int == 256 && thumbnail["height"] as? Int == 171)
        let png = try #require(Data(base64Encoded: thumbnail["data"] as? String ?? ""))
        #expect(dimensions(png)! == (256, 171))

        let bomb = try await rpc.awaitCall("files/thumbnail", ["path": "m/bomb.png"])
        #expect(errorKind(bomb) == "tooLarge")
        #expect(errorMessage(bomb)?.contains("was not decoded") == true)
        let text = try await rpc.awaitCall("files/thumbnail", ["path": "m/notes.txt"])
        #expect(errorKind(text) == "unsupported")
        let badSize = try await rpc.awaitCall("files/thumbnail", ["path": "m/wide.png", "size": 0])
        #expect(errorCode(badSize) == -32602)
        rpc.closeInput()
        #expect(try await offPool { try rpc.waitForExit() } == 0)
    }

    @Test func mcpSendsAThumbnailWhenTheImageIsLargerThanAsked() async throws {
        try prepare()
        let mcp = try await RPCProcess.mcp(container: container)
        let root = directory.url("container/Documents/UserFiles")
        let small = try #require(result(try await mcp.awaitCall("tools/call", [
            "name": "read_media_file", "arguments": ["path": root + "/m/photo.jpg", "maxSize": 100]])))
        let block = (small["content"] as? [[String: Any]])?.first
        #expect(block?["type"] as? String == "image" && block?["mimeType"] as? String == "image/png")
        let structured = small["structuredContent"] as? [String: Any]
        #expect(structured?["thumbnail"] as? Bool == true)
        // The photo is turned upright: 480 × 640 shown, so 75 × 100.
        #expect(structured?["width"] as? Int == 75 && structured?["height"] as? Int == 100)
        let png = try #require(Data(base64Encoded: block?["data"] as? String ?? ""))
        #expect(dimensions(png)! == (75, 100))

        // Asked for more than it has, the file itself comes.
        let whole = try #require(result(try await mcp.awaitCall("tools/call", [
            "name": "read_media_file", "arguments": ["path": root + "/m/photo.jpg", "maxSize": 1000]])))
        #expect((whole["content"] as? [[String: Any]])?.first?["mimeType"] as? String == "image/jpeg")
        #expect((whole["structuredContent"] as? [String: Any])?["thumbnail"] as? Bool == false)
        mcp.closeInput()
        #expect(try await offPool { try mcp.waitForExit() } == 0)
    }
}
