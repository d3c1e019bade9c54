import CofferCore
import Testing

/// Content rules as shared-mime-info writes them, read and matched by Coffer.
struct ContentMagicTests {
    @Test(arguments: [
        // value, the bytes it stands for
        ("EXNOTES1", Array("EXNOTES1".utf8)),
        (#"PK\003\004"#, [0x50, 0x4B, 3, 4]),
        (#"MSCF\0\0"#, [0x4D, 0x53, 0x43, 0x46, 0, 0]),
        (#"\x89PNG"#, [0x89, 0x50, 0x4E, 0x47]),
        (#"\x4"#, [4]),
        (#"{\\rtf"#, [0x7B, 0x5C, 0x72, 0x74, 0x66]),
        (#"a\nb\tc\"d"#, [0x61, 10, 0x62, 9, 0x63, 0x22, 0x64]),
        (#"\376\067\0\043"#, [0o376, 0o67, 0, 0o43]),
        ("笔记", Array("笔记".utf8)),
        (#"end\"#, Array(#"end\"#.utf8)),
    ] as [(String, [UInt8])])
    func stringValuesDecodeTheirEscapes(_ value: String, _ bytes: [UInt8]) {
        #expect(ContentMagic(value: value).bytes == bytes)
    }

    @Test(arguments: [
        ("byte", "0x7f", [0x7F]), ("byte", "255", [0xFF]), ("byte", "017", [0o17]),
        ("big16", "0x4d4d", [0x4D, 0x4D]), ("little16", "0x0102", [0x02, 0x01]),
        ("big32", "0xCAFEBABE", [0xCA, 0xFE, 0xBA, 0xBE]), ("little32", "1", [1, 0, 0, 0]),
        ("host16", "0x0102", [0x02, 0x01]),  // a little-endian machine
    ] as [(String, String, [UInt8])])
    func numbersTakeTheirWidthAndByteOrder(_ type: String, _ value: String, _ bytes: [UInt8]) {
        #expect(ContentMagic(type: type, value: value).bytes == bytes)
    }

    @Test(arguments: [("byte", "256"), ("big16", "0x10000"), ("big32", "0x100000000"), ("little32", "-1"),
                      ("byte", "0x"), ("byte", "09"), ("regex", "x"), ("string", "")])
    func numbersThatDoNotFitAndUnknownTypesSeekNothing(_ type: String, _ value: String) {
        #expect(ContentMagic(type: type, value: value).bytes == nil)
        #expect(!ContentMagic(type: type, value: value).matches(Array(repeating: 0, count: 16)))
    }

    @Test func offsetsAreOneOrARange() {
        #expect(ContentMagic(offset: "4", value: "x").offsets == 4...4)
        #expect(ContentMagic(offset: "0:64", value: "x").offsets == 0...64)
        for bad in ["", "eight", "-1", "5:2", "1:2:3", "١"] { #expect(ContentMagic(offset: bad, value: "x").offsets == nil, "\(bad)") }
        #expect(ContentMagic(offset: "10:20", value: "abc").reach == 23)
    }

    @Test func matchingLooksWhereTheOffsetsSay() {
        let header = ContentMagic(value: "EXNOTES1")
        #expect(header.matches(Array("EXNOTES1 and more".utf8)))
        #expect(header.matches(Array("EXNOTES1".utf8)))
        #expect(!header.matches(Array("EXNOTES".utf8)))       // too short
        #expect(!header.matches(Array(" EXNOTES1".utf8)))     // not at 0
        #expect(!header.matches([]))

        let anywhere = ContentMagic(offset: "2:6", value: "ab")
        #expect(anywhere.matches(Array("xxab".utf8)))
        #expect(anywhere.matches(Array("xxxxxxab".utf8)))     // starts at 6, the last allowed
        #expect(!anywhere.matches(Array("xxxxxxxab".utf8)))   // starts at 7
        #expect(!anywhere.matches(Array("abxx".utf8)))        // starts at 0
        #expect(ContentMagic(type: "big16", offset: "1", value: "0x0102").matches([9, 1, 2]))
        #expect(!ContentMagic(type: "little16", offset: "1", value: "0x0102").matches([9, 1, 2]))
    }

    @Test func declaredRulesFindTheirTypeInTheRegistry() throws {
        let notes = FileType(id: "com.example.notes", conformsTo: ["public.plain-text"], extensions: ["exnotes"],
                             mimeTypes: ["application/x-example-notes"], englishName: "Notes",
                             magic: [ContentMagic(value: "EXNOTES1"), ContentMagic(offset: "0:8", value: "#notes")])
        let registry = TypeRegistry.standard.adding([notes])
        #expect(TypeRegistry.standard.magicReach == 0)
        #expect(TypeRegistry.standard.mimeType(matchingDeclaredMagicIn: Array("EXNOTES1".utf8)) == nil)
        #expect(registry.magicReach == 14)
        #expect(registry.mimeType(matchingDeclaredMagicIn: Array("EXNOTES1 …".utf8)) == "application/x-example-notes")
        #expect(registry.mimeType(matchingDeclaredMagicIn: Array("  #notes".utf8)) == "application/x-example-notes")
        #expect(registry.mimeType(matchingDeclaredMagicIn: Array("plain words".utf8)) == nil)
        // What the content says then weighs against the name as libmagic's answer would.
        let assessed = registry.assess(fileNamed: "from-mail.bin", contentMIMEType: "application/x-example-notes")
        #expect(assessed.effective == "com.example.notes")
    }
}
