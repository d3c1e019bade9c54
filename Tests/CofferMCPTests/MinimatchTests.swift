@testable import CofferMCP
import Testing

/// `search_files` reads globs as the reference server does: `minimatch(path, pattern, {dot: true})`.
/// Each row is a pattern, paths it matches, and paths it does not, from minimatch's documented
/// behaviour (its README and the bash rules it follows).
@Suite struct MinimatchTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var pattern: String
        var yes: [String]
        var no: [String]
        var testDescription: String { pattern }
    }

    static let cases: [Case] = [
        // `*` stays within a segment; a pattern is tried on the whole relative path.
        Case(pattern: "*.txt", yes: ["a.txt", ".hidden.txt", "名字.txt"], no: ["sub/a.txt", "a.txt.bak", "a.md"]),
        Case(pattern: "sub/*.txt", yes: ["sub/a.txt"], no: ["sub/deeper/a.txt", "a.txt", "other/a.txt"]),
        // `**/` matches no folder as well as many (the case the old globs missed).
        Case(pattern: "sub/**/*.txt", yes: ["sub/nested.txt", "sub/a/b/c.txt"], no: ["nested.txt", "sub/a.md"]),
        Case(pattern: "**/*.txt", yes: ["a.txt", "x/a.txt", "x/y/z.txt", ".git/x.txt"], no: ["a.md", "x/a.txt/y"]),
        Case(pattern: "**", yes: ["a", "a/b", ".dot/c"], no: []),
        Case(pattern: "a/**", yes: ["a/b", "a/b/c"], no: ["a", "b/a"]),
        Case(pattern: "**/node_modules/**", yes: ["node_modules/x", "a/node_modules/b/c"], no: ["node_modules", "a/node_modules"]),
        // `?`, sets, ranges, negated sets, POSIX classes, escapes.
        Case(pattern: "?.js", yes: ["a.js", "1.js"], no: ["ab.js", ".js"]),
        Case(pattern: "[abc].txt", yes: ["a.txt", "c.txt"], no: ["d.txt", "ab.txt"]),
        Case(pattern: "file[0-9].log", yes: ["file1.log", "file9.log"], no: ["fileA.log", "file10.log"]),
        Case(pattern: "[!a]*", yes: ["b", "zz"], no: ["a", "abc"]),
        Case(pattern: "[^a]*", yes: ["b"], no: ["a"]),
        Case(pattern: "[[:digit:]][[:alpha:]]", yes: ["1a", "9Z"], no: ["a1", "11"]),
        Case(pattern: "\\*.txt", yes: ["*.txt"], no: ["a.txt"]),
        Case(pattern: "[a-", yes: ["[a-"], no: ["a"]),
        // Braces.
        Case(pattern: "*.{js,ts}", yes: ["a.js", "b.ts"], no: ["c.md", "d.jsts"]),
        Case(pattern: "src/**/*.{js,jsx}", yes: ["src/a.js", "src/x/b.jsx"], no: ["a.js", "src/c.ts"]),
        Case(pattern: "file{1..3}.txt", yes: ["file1.txt", "file3.txt"], no: ["file4.txt", "file{1..3}.txt"]),
        Case(pattern: "v{01..03}", yes: ["v01", "v02", "v03"], no: ["v1", "v04"]),
        Case(pattern: "{a..c}.md", yes: ["a.md", "b.md", "c.md"], no: ["d.md"]),
        Case(pattern: "a{b,c{d,e}}f", yes: ["abf", "acdf", "acef"], no: ["acf", "af"]),
        Case(pattern: "{x}", yes: ["{x}"], no: ["x"]),
        // Extended globs.
        Case(pattern: "+(a|b).txt", yes: ["a.txt", "abba.txt"], no: [".txt", "c.txt"]),
        Case(pattern: "*(a|b).txt", yes: [".txt", "ab.txt"], no: ["c.txt"]),
        Case(pattern: "?(a|b).txt", yes: [".txt", "a.txt"], no: ["ab.txt"]),
        Case(pattern: "@(a|b).txt", yes: ["a.txt", "b.txt"], no: ["ab.txt", ".txt"]),
        Case(pattern: "!(*.md)", yes: ["a.txt", "readme"], no: ["a.md"]),
        Case(pattern: "a.!(js)", yes: ["a.txt", "a.jsx"], no: ["a.js"]),
        // Dot names match (`dot: true`), but `*` never names `.` or `..`.
        Case(pattern: "*", yes: [".env", "a"], no: [".", "..", "a/b"]),
        // A leading `!` negates the pattern; `#` starts a comment.
        Case(pattern: "!*.txt", yes: ["a.md", "sub/a.txt"], no: ["a.txt"]),
        Case(pattern: "#*.txt", yes: [], no: ["#a.txt", "a.txt"]),
        // Case counts.
        Case(pattern: "*.TXT", yes: ["A.TXT"], no: ["a.txt"]),
    ]

    @Test(arguments: cases)
    func matchesAsMinimatchDoes(_ row: Case) {
        let glob = Minimatch(row.pattern)
        for path in row.yes { #expect(glob.matches(path), "\(row.pattern) should match \(path)") }
        for path in row.no { #expect(!glob.matches(path), "\(row.pattern) should not match \(path)") }
    }

    /// A pattern that would backtrack for minutes on a long name costs a bounded amount of
    /// work (without the bound, this test does not end).
    @Test func aPathologicalPatternEnds() {
        let name = String(repeating: "a", count: 200)
        #expect(!Minimatch("+(a|aa|aaa)b").matches(name))
        #expect(!Minimatch("*a*a*a*a*a*a*a*b").matches(name))
        #expect(Minimatch("+(a|aa|aaa)").matches("aaaa"))
    }

    @Test func bracesExpandAsBashDoes() {
        #expect(Minimatch.expandBraces("a{b,c}d{1..2}") == ["abd1", "abd2", "acd1", "acd2"])
        #expect(Minimatch.expandBraces("{5..1..2}") == ["5", "3", "1"])
        #expect(Minimatch.expandBraces("\\{a,b}") == ["\\{a,b}"])
        #expect(Minimatch.expandBraces("{}") == ["{}"])
    }

    /// `directory_tree`'s excludes: a name without `*` also excludes it anywhere, and all below it.
    @Test func treeExclusionsTakeANameAnywhere() {
        let exclude = ReferenceExclusion.tree(["node_modules", "*.log"])
        #expect(exclude.matches("node_modules") && exclude.matches("a/node_modules") && exclude.matches("a/node_modules/x"))
        #expect(exclude.matches("x.log") && !exclude.matches("sub/x.log"))
        #expect(!exclude.matches("src/main.swift"))
        let search = ReferenceExclusion.searching(["node_modules"])
        #expect(search.matches("node_modules") && !search.matches("a/node_modules"))
    }
}
