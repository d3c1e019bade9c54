import CofferCore
import Foundation
import Testing

struct NamePatternTests {
    @Test(arguments: [
        ("report", "Q3-Report.pdf", true),
        ("REPORT", "q3-report.pdf", true),
        ("报告", "年度报告.txt", true),
        ("resume", "Résumé.docx", true),
        ("résumé", "RESUME.docx", true),
        ("resume", "Re\u{301}sume\u{301}.docx", true),   // NFD on disk
        ("re\u{301}sume\u{301}", "Résumé.docx", true),   // NFD pattern
        ("report", "ｒｅｐｏｒｔ.txt", true),                 // full-width letters
        ("straße", "STRASSE.txt", true),                 // full case folding: ß is ss
        ("report", "Repo rt.pdf", false),
        ("年度", "报告.txt", false),
        (" 2", "Draft 2.md", true),
    ])
    func matchesIgnoringCaseAccentsAndWidth(pattern: String, name: String, expected: Bool) throws {
        #expect(try NamePattern(pattern).matches(name) == expected)
        #expect(try NamePattern(pattern).matches(foldedName: NamePattern.fold(name)) == expected)
    }

    @Test func anEmptyPatternIsRefused() {
        #expect(throws: CofferError.self) { try NamePattern("") }
    }

    @Test func countsCharactersForTheTrigramDecision() throws {
        #expect(try NamePattern("报告").foldedLength == 2)
        #expect(try NamePattern("Réa").foldedLength == 3)
        #expect(try NamePattern("Re\u{301}").foldedLength == 2)
    }

    /// The shortcut for ASCII and CJK names must fold exactly as Foundation does.
    @Test func theQuickFoldAgreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        let pools: [ClosedRange<UInt32>] = [0x20...0x7E, 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x3001...0x3003, 0x3008...0x3011]
        for _ in 0..<2_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                let pool = pools.randomElement(using: &generator)!
                scalars.append(Unicode.Scalar(UInt32.random(in: pool, using: &generator))!)
            }
            let name = String(scalars)
            let foundation = name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive],
                                          locale: nil).precomposedStringWithCanonicalMapping
            #expect(NamePattern.fold(name) == foundation, "\(name)")
        }
    }
}

struct PathSortKeyTests {
    /// Byte order of the keys must be the order a walk visits paths: folders first, natural
    /// order, each folder's contents right after it.
    @Test func byteOrderIsWalkOrder() {
        let names = ["a", "A2", "a10", "a2", "b", "Äpple", "apple", "报告", "年度", "x 1", "x-1", "file10.txt",
                     "file9.txt", "file09.txt", "Z", "zz", "1", "01", "_"]
        var generator = SystemRandomNumberGenerator()
        // A random tree: paths of up to three levels, each level folder or file.
        var folders: Set<[String]> = [[]]
        var paths: [(components: [String], isFile: Bool)] = []
        for _ in 0..<400 {
            let parent = folders.randomElement(using: &generator)!
            guard parent.count < 3 else { continue }
            let name = names.randomElement(using: &generator)!
            let child = parent + [name]
            guard !paths.contains(where: { $0.components == child }) else { continue }
            let isFile = Bool.random(using: &generator)
            paths.append((child, isFile))
            if !isFile { folders.insert(child) }
        }
        func key(_ path: (components: [String], isFile: Bool)) -> [UInt8] {
            var bytes: [UInt8] = []
            for (index, name) in path.components.enumerated() {
                bytes += PathSortKey.component(name, isFile: index == path.components.count - 1 && path.isFile)
            }
            return bytes
        }
        let byKey = paths.sorted { key($0).lexicographicallyPrecedes(key($1)) }.map(\.components)
        // The walk, done by hand: children sorted folders first, then naturally, recursively.
        func walk(_ folder: [String]) -> [[String]] {
            let children = paths.filter { $0.components.dropLast() == folder[...] && $0.components.count == folder.count + 1 }
            let sorted = children.sorted { a, b in
                a.isFile != b.isFile ? !a.isFile : a.components.last!.naturallyPrecedes(b.components.last!)
            }
            return sorted.flatMap { [$0.components] + ($0.isFile ? [] : walk($0.components)) }
        }
        #expect(byKey == walk([]))
    }
}

struct ChangeCoalescerTests {
    func coalesce(_ events: [(String, FileChange.Kind)], reportingPassing: Bool = false) throws -> [String] {
        var coalescer = ChangeCoalescer(reportingPassing: reportingPassing)
        for (path, kind) in events { coalescer.add(FileChange(path: try VirtualPath(parsing: path), kind: kind)) }
        return coalescer.drain().map { "\($0.path.name) \($0.kind.rawValue)" }
    }

    /// A cache (the search index) hears of an item that came and went: it may have read it.
    @Test func aPassingItemIsReportedGoneToACache() throws {
        #expect(try coalesce([("/tmp", .created), ("/tmp", .deleted)], reportingPassing: true) == ["tmp deleted"])
        #expect(try coalesce([("/a", .created), ("/a", .changed)], reportingPassing: true) == ["a created"])
    }

    @Test func reducesEachPathToWhatAClientNeeds() throws {
        #expect(try coalesce([("/a", .created), ("/a", .changed), ("/a", .changed)]) == ["a created"])
        #expect(try coalesce([("/a", .changed), ("/a", .changed)]) == ["a changed"])
        #expect(try coalesce([("/tmp", .created), ("/tmp", .changed), ("/tmp", .deleted)]) == [])
        #expect(try coalesce([("/a", .deleted), ("/a", .created)]) == ["a changed"])
        #expect(try coalesce([("/a", .changed), ("/a", .deleted)]) == ["a deleted"])
        #expect(try coalesce([("/b", .created), ("/a", .deleted), ("/b", .changed)]) == ["b created", "a deleted"])
        #expect(try coalesce([("/a", .created), ("/a", .deleted), ("/a", .created)]) == ["a created"])
    }
}

/// Tags as the desktop writes them (`user.xdg.tags`, comma-separated).
struct FileTagsTests {
    @Test func tagsAreParsedAndChangedAsFileManagersWriteThem() throws {
        #expect(FileTags.parse(Array("work, urgent,,work ,报告\0".utf8)) == ["work", "urgent", "报告"])
        #expect(FileTags.format(["a", "b c"]) == Array("a,b c".utf8))
        #expect(FileTags.changing(["a", "b"], adding: ["c", "a"], removing: ["b"]) == ["a", "c"])
        #expect(throws: CofferError.self) { try FileTags.check("a,b") }
        #expect(throws: CofferError.self) { try FileTags.check(" a") }
        #expect(throws: CofferError.self) { try FileTags.check("a\u{7}") }
        try FileTags.check("Q3 plans")
    }
}
