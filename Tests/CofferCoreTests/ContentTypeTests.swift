import CofferCore
import Testing

/// Weighing a file's name against what libmagic saw in it.
struct TypeAssessmentTests {
    let registry = TypeRegistry.standard

    @Test(arguments: [
        // name, libmagic's answer, effective type, mismatch
        ("photo.png", "image/png", "public.png", false),
        ("photo.png", "text/plain", "public.plain-text", true),
        ("notes.md", "text/plain", "net.daringfireball.markdown", false),
        ("main.swift", "text/x-c", "public.swift-source", false),
        ("letter.zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
         "org.openxmlformats.wordprocessingml.document", false),
        ("data.bin", "image/png", "public.png", false),
        ("archive.custom", "application/octet-stream", "public.data", false),
        ("secret.png", "application/octet-stream", "public.png", false),
        ("readme.txt", "application/octet-stream", "public.data", true),
        ("empty.png", "inode/x-empty", "public.png", false),
        ("photo.png", "image/x-unknown-format", "public.png", false),
        ("clip.mov", "image/x-unknown-format", "public.image", true),
        ("song.mp3", "image/jpeg", "public.jpeg", true),
        ("script.py", "text/x-script.python", "public.python-script", false),
    ])
    func assessment(name: String, mime: String, effective: String, mismatch: Bool) {
        let assessment = registry.assess(fileNamed: name, contentMIMEType: mime)
        #expect(assessment.effective == effective)
        #expect(assessment.isMismatch == mismatch)
        #expect(assessment.byName == registry.typeIdentifier(forFileNamed: name))
    }

    @Test func withoutContentTheNameDecides() {
        let assessment = registry.assess(fileNamed: "a.pdf", contentMIMEType: nil)
        #expect(assessment.effective == "com.adobe.pdf")
        #expect(assessment.byContent == nil)
        #expect(!assessment.isMismatch)
    }

    @Test func filtersAdmitByConformance() {
        #expect(registry.admits("public.png", allowed: ["public.image"]))
        #expect(registry.admits("public.heic", allowed: ["public.audio", "public.image"]))
        #expect(!registry.admits("public.plain-text", allowed: ["public.image"]))
        #expect(registry.admits("public.plain-text", allowed: []))
        #expect(registry.admits("net.daringfireball.markdown", allowed: ["public.text"]))
    }
}

/// Telling UTF-8, UTF-16 and GB 18030 apart, and decoding them a chunk at a time.
struct TextEncodingTests {
    static let chinese = "年度报告：第一季度 Q1 résumé"

    static func utf16(_ text: String, bigEndian: Bool) -> [UInt8] {
        (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) + text.utf16.flatMap { unit in
            bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
    }

    /// 年度报告 in GB 18030 (the same bytes as GBK).
    static let gbBytes: [UInt8] = [0xC4, 0xEA, 0xB6, 0xC8, 0xB1, 0xA8, 0xB8, 0xE6]

    @Test func detection() {
        #expect(TextDetection.detect(Array(Self.chinese.utf8), isComplete: true) == .text(.utf8, bomLength: 0))
        #expect(TextDetection.detect([0xEF, 0xBB, 0xBF] + Array("x".utf8), isComplete: true) == .text(.utf8, bomLength: 3))
        #expect(TextDetection.detect(Self.utf16("x", bigEndian: false), isComplete: true) == .text(.utf16LittleEndian, bomLength: 2))
        #expect(TextDetection.detect(Self.utf16("x", bigEndian: true), isComplete: true) == .text(.utf16BigEndian, bomLength: 2))
        #expect(TextDetection.detect(Self.gbBytes, isComplete: true) == .text(.gb18030, bomLength: 0))
        #expect(TextDetection.detect([0x89, 0x50, 0x4E, 0x47, 0x00, 0x01], isComplete: true) == .binary)
        #expect(TextDetection.detect([0xFF, 0x80, 0xFF, 0x80], isComplete: true) == .binary)
        #expect(TextDetection.detect([], isComplete: true) == .text(.utf8, bomLength: 0))
    }

    @Test func aCharacterCutAtTheEndOfASampleIsNotHeldAgainstIt() {
        let bytes = Array("报告".utf8)
        let cut = Array(bytes.dropLast())
        #expect(TextDetection.detect(cut, isComplete: false) == .text(.utf8, bomLength: 0))
        // The whole file ending mid-character is not valid UTF-8 (GB 18030 takes it instead).
        #expect(TextDetection.detect(cut, isComplete: true) != .text(.utf8, bomLength: 0))
    }

    @Test(arguments: TextCharset.allCases)
    func decodingInChunksOfEverySizeGivesTheSameText(charset: TextCharset) {
        let text = charset == .gb18030 ? "年度报告" : Self.chinese
        let bytes: [UInt8] = switch charset {
        case .utf8: Array(text.utf8)
        case .utf16LittleEndian: Array(Self.utf16(text, bigEndian: false).dropFirst(2))
        case .utf16BigEndian: Array(Self.utf16(text, bigEndian: true).dropFirst(2))
        case .gb18030: Self.gbBytes
        }
        for size in 1...5 {
            var decoder = StreamingTextDecoder(charset: charset)
            var result = ""
            var index = 0
            while index < bytes.count {
                let end = min(bytes.count, index + size)
                result += decoder.decode(bytes[index..<end], isFinal: false)
                index = end
            }
            result += decoder.decode([], isFinal: true)
            #expect(result == text, "chunks of \(size)")
            #expect(decoder.invalidSequences == 0)
        }
    }

    @Test func invalidBytesBecomeReplacementCharacters() {
        var decoder = StreamingTextDecoder(charset: .utf8)
        let result = decoder.decode([0x61, 0xFF, 0x62, 0xE5, 0xB9], isFinal: true)
        #expect(result == "a\u{FFFD}b\u{FFFD}\u{FFFD}")
        #expect(decoder.invalidSequences == 3)
    }
}
