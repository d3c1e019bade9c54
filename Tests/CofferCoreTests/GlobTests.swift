import CofferCore
import Foundation
import Testing

/// Globs in each dialect clients send (``Glob``). Minimatch's rows are a pattern, paths it
/// matches and paths it does not, from minimatch's documented behaviour (its README and the
/// bash rules it follows): `search_files` reads globs as the reference server does.
@Suite struct GlobTests {
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
    func matchesAsMinimatchDoes(_ row: Case) throws {
        let glob = try Glob(row.pattern, syntax: .minimatch)
        for path in row.yes { #expect(glob.matches(path), "\(row.pattern) should match \(path)") }
        for path in row.no { #expect(!glob.matches(path), "\(row.pattern) should not match \(path)") }
    }

    /// A pattern that would backtrack for minutes on a long name costs a bounded amount of
    /// work (without the bound, this test does not end).
    @Test func aPathologicalPatternEnds() throws {
        let name = String(repeating: "a", count: 200)
        #expect(try !Glob("+(a|aa|aaa)b", syntax: .minimatch).matches(name))
        #expect(try !Glob("*a*a*a*a*a*a*a*b", syntax: .minimatch).matches(name))
        #expect(try Glob("+(a|aa|aaa)", syntax: .minimatch).matches("aaaa"))
        #expect(try !Glob("*a*a*a*a*a*a*a*a*a*a*a*b", syntax: .shell).matches(name))
        #expect(try !Glob("*a*a*a*a*a*a*a*a*a*a*a*b", syntax: .fnmatch).matches(name))
    }

    /// Brace sets are matched where they stand: a range of a hundred million members costs
    /// no more to make than its text (expanded, it took 6 GB and minutes).
    @Test func aHugeRangeIsMatchedWithoutBeingExpanded() throws {
        let glob = try Glob("{1..99999999}", syntax: .minimatch)
        for yes in ["1", "42", "99999999", "12345678"] { #expect(glob.matches(yes), "\(yes)") }
        for no in ["0", "100000000", "01", "-1", "a", "", "1a"] { #expect(!glob.matches(no), "\(no)") }
        let padded = try Glob("v{0001..5000..7}.txt", syntax: .minimatch)
        #expect(padded.matches("v0001.txt") && padded.matches("v0008.txt") && padded.matches("v4999.txt"))
        #expect(!padded.matches("v0002.txt") && !padded.matches("v8.txt") && !padded.matches("v5006.txt"))
        let negative = try Glob("t{-3..3..3}", syntax: .minimatch)
        #expect(negative.matches("t-3") && negative.matches("t0") && negative.matches("t3"))
        #expect(!negative.matches("t-2") && !negative.matches("t-0"))
        let letters = try Glob("{z..a..5}", syntax: .minimatch)
        #expect(letters.matches("z") && letters.matches("u") && letters.matches("a") && !letters.matches("y"))
        // Sets side by side multiply as text, not as memory.
        let product = try Glob("{1..9999}{1..9999}{1..9999}-{a,b,c,d}{x,y}", syntax: .minimatch)
        #expect(product.matches("12345-dy") && !product.matches("12345-ez"))
    }

    /// Sets whose choices hold a `/` or a `**` are expanded, as minimatch does, up to a bound:
    /// past it the pattern is refused with an error a model can read.
    @Test func bracesThatCutThePathAreExpandedUpToABound() throws {
        let glob = try Glob("{src,test/unit}/**/*.{js,ts}", syntax: .minimatch)
        #expect(glob.matches("src/a.js") && glob.matches("test/unit/x/b.ts") && !glob.matches("test/a.js"))
        #expect(try Glob("x/{**,a}/y", syntax: .minimatch).matches("x/p/q/y"))
        // Ten sets of two choices with a `/`: 1,024 patterns.
        let doubling = String(repeating: "{a/1,b/2}", count: 10)
        #expect(try Glob(String(repeating: "{a/1,b/2}", count: 9), syntax: .minimatch).matches("a/1b/2a/1b/2a/1b/2a/1b/2a/1"))
        let error = #expect(throws: CofferError.self) { try Glob(doubling, syntax: .minimatch) }
        #expect(error?.detail == Glob.tooLarge)
        #expect(error?.userMessage(in: .english).description.contains("1,000") == true, "\(String(describing: error))")
        #expect(throws: CofferError.self) { try Glob(String(repeating: "a", count: Glob.maximumLength + 1), syntax: .minimatch) }
    }

    @Test func theShellsWildcardsMatchOneNameAndADotNameOnlyWithADot() throws {
        let star = try Glob("*.txt", syntax: .shell)
        #expect(star.matches("a.txt") && !star.matches(".a.txt") && !star.matches("a.md"))
        #expect(try Glob(".*", syntax: .shell).matches(".hidden"))
        #expect(try !Glob("?a", syntax: .shell).matches(".a"))
        #expect(try Glob("[ab]\\*", syntax: .shell).matches("a*") && !Glob("[ab]\\*", syntax: .shell).matches("ab"))
        #expect(try Glob("{a,b}", syntax: .shell).matches("{a,b}"))
    }

    @Test func fnmatchsStarCrossesSlashes() throws {
        let glob = try Glob("*.md", syntax: .fnmatch)
        #expect(glob.matches("docs/a.md") && glob.matches("a.md") && !glob.matches("a.txt"))
        #expect(try Glob("docs/*.md", syntax: .fnmatch).matches("docs/x/y.md"))
    }

    /// Sequences as brace expansion reads them: two integers or two ASCII letters; anything
    /// else stays as written.
    @Test func onlyIntegersOrLettersMakeASequence() throws {
        #expect(try Glob("f{1..c}", syntax: .minimatch).matches("f{1..c}"))
        #expect(try !Glob("f{1..c}", syntax: .minimatch).matches("fZ"))
        #expect(try Glob("{*..z}", syntax: .minimatch).matches("{*..z}"))
        #expect(try Glob("{+1..3}", syntax: .minimatch).matches("{+1..3}"))
        // `-0` is no leading zero before a digit: no padding (as brace-expansion's /^-?0\d/).
        let unpadded = try Glob("f{-0..3}", syntax: .minimatch)
        #expect(unpadded.matches("f0") && unpadded.matches("f3") && !unpadded.matches("f00"))
        #expect(try Glob("f{-05..5}", syntax: .minimatch).matches("f-05") && Glob("f{-05..5}", syntax: .minimatch).matches("f005"))
    }

    @Test func aNamePastItsStepsDoesNotMatchEvenNegated() throws {
        let name = String(repeating: "a", count: 200)
        #expect(try !Glob("!*a*a*a*a*a*a*a*b", syntax: .minimatch).matches(name))
        #expect(try Glob("!+(a|aa)b", syntax: .minimatch).matches(String(repeating: "a", count: 60)), "not costly: a plain no")
        #expect(try Glob("!*.txt", syntax: .minimatch).matches("a.md"))
    }

    @Test func namesAreComparedAsTheirScalarsLiteralOrNot() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(try Glob(composed, syntax: .minimatch).matches(composed))
        #expect(try !Glob(composed, syntax: .minimatch).matches(decomposed))
        #expect(try !Glob("caf?", syntax: .minimatch).matches(decomposed))
    }

    /// Length is counted in scalars: one letter with many combining marks is one character
    /// but many scalars, and braces holding `/` multiply it.
    @Test func lengthIsCountedInScalarsAndExpansionsAreBoundedInSize() {
        let heavy = "a" + String(repeating: "\u{301}", count: 5_000)
        #expect(throws: CofferError.self) { try Glob(heavy, syntax: .minimatch) }
        let marks = "a" + String(repeating: "\u{301}", count: 1_000)
        #expect(throws: CofferError.self) { try Glob(String(repeating: "{a/,b/}", count: 9) + marks, syntax: .minimatch) }
    }
}
