import Foundation

/// The preview tests' files (`Media/make_media.py`): images made by Pillow and by libvips'
/// `vips` command, a PDF, texts and archives (zip, tar, tar.gz, 7z by bsdtar), a corrupt
/// JPEG and a decompression bomb. Needs a Python with Pillow (`COFFER_TEST_PYTHON`, CI's
/// `.ci/venv`), `vips` (libvips-tools) and `bsdtar` (libarchive-tools).
public enum MediaFixtures {
    /// Whether the tools are here; when not, and `COFFER_REQUIRE_PREVIEW=1` (CI), that is fatal.
    public static var available: Bool {
        let ready = run(["-c", "import PIL"]) && tool("vips") && tool("bsdtar")
        if !ready && ProcessInfo.processInfo.environment["COFFER_REQUIRE_PREVIEW"] == "1" {
            fatalError("COFFER_REQUIRE_PREVIEW=1, but \(TransferServer.python) has no Pillow, or vips or bsdtar is missing")
        }
        return ready
    }

    /// Makes the files in `folder`.
    public static func make(in folder: String) throws {
        guard run([script("make_media.py"), folder]) else { throw FixtureError("make_media.py failed") }
    }

    /// What Pillow reads of a PNG: its size and its text chunks.
    public struct PNGInfo: Decodable, Sendable {
        public var width: Int
        public var height: Int
        public var format: String
        public var text: [String: String]
        /// The MD5 of its `Thumb::URI`, by Python's hashlib.
        public var uriMD5: String
    }

    /// Each PNG as Pillow reads it.
    public static func read(_ pngs: [String]) throws -> [PNGInfo] {
        let result = try TestProcess.run([TransferServer.python, script("read_thumbnail.py")] + pngs, timeout: 120)
        guard result.status == 0 else { throw FixtureError("Pillow could not read \(pngs): \(result.errorText)") }
        let data = result.output
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(PNGInfo.self, from: Data($0.utf8))
        }
    }

    /// ``read(_:)`` for PNG bytes in memory (written to a temporary file first).
    public static func read(bytes png: [UInt8]) throws -> PNGInfo? {
        let file = NSTemporaryDirectory() + "/coffer-png-\(UUID().uuidString).png"
        try Data(png).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try read([file]).first
    }

    public struct FixtureError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    private static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Media/\(name)").path
    }

    private static func run(_ arguments: [String]) -> Bool {
        (try? TestProcess.run([TransferServer.python] + arguments, timeout: 300))?.status == 0
    }

    private static func tool(_ name: String) -> Bool {
        ["/usr/bin", "/usr/local/bin", "/bin"].contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
}
