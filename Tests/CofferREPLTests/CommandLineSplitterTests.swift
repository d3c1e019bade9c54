import CofferREPL
import Testing

struct CommandLineSplitterTests {
    @Test(arguments: [
        ("ls -l", ["ls", "-l"]),
        ("cd 'My Notes'", ["cd", "My Notes"]),
        ("cd \"报告 2026\"", ["cd", "报告 2026"]),
        ("mv a\\ b c", ["mv", "a b", "c"]),
        ("echo 'it'\\''s'", ["echo", "it's"]),
        ("x \"a\\\"b\"", ["x", "a\"b"]),
        ("x \"a\\nb\"", ["x", "a\\nb"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("x ''", ["x", ""]),
        ("ls # comment", ["ls"]),
        ("ls a#b", ["ls", "a#b"]),
    ])
    func splitsWords(_ line: String, expected: [String]) throws {
        #expect(try CommandLineSplitter.words(line) == expected)
    }

    @Test func semicolonsSeparateCommandsOutsideQuotes() throws {
        #expect(try CommandLineSplitter.commands("ls; mkdir 'a;b' ;; pwd") == [["ls"], ["mkdir", "a;b"], ["pwd"]])
    }

    @Test func unterminatedQuotesAreErrors() {
        #expect(throws: CommandLineSplitter.Failure.unterminatedQuote("'")) { try CommandLineSplitter.words("cd 'abc") }
        #expect(throws: CommandLineSplitter.Failure.unterminatedQuote("\"")) { try CommandLineSplitter.words("cd \"abc") }
        #expect(throws: CommandLineSplitter.Failure.danglingBackslash) { try CommandLineSplitter.words("cd abc\\") }
    }

    @Test(arguments: ["plain", "with space", "it's", "报告", "a\"b", "$HOME", "", "semi;colon"])
    func quotingRoundTrips(_ word: String) throws {
        #expect(try CommandLineSplitter.words("cmd " + CommandLineSplitter.quote(word)) == ["cmd", word])
    }
}
