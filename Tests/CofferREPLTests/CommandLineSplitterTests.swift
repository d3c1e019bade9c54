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

/// The tolerant scan completion uses on a line still being typed.
struct CommandLineScanTests {
    typealias Word = CommandLineSplitter.Word

    @Test func recordsWhereEachWordStartsInBytes() {
        let scan = CommandLineSplitter.scan("cd '报告 2026' x")
        #expect(scan.commands == [[Word(text: "cd", start: 0), Word(text: "报告 2026", start: 3), Word(text: "x", start: 17)]])
        #expect(scan.endsInWord)
        #expect(scan.openQuote == nil)
    }

    @Test func anOpenQuoteIsRecordedNotThrown() {
        let scan = CommandLineSplitter.scan("cd \"My No")
        #expect(scan.openQuote == "\"")
        #expect(scan.commands.last?.last == Word(text: "My No", start: 3))
        #expect(scan.endsInWord)
    }

    @Test func aTrailingSpaceOrSemicolonStartsAFreshWordOrCommand() {
        #expect(!CommandLineSplitter.scan("ls ").endsInWord)
        let scan = CommandLineSplitter.scan("ls; mk")
        #expect(scan.commands == [[Word(text: "ls", start: 0)], [Word(text: "mk", start: 4)]])
        #expect(CommandLineSplitter.scan("ls;").commands.last == [])
    }

    @Test func backslashesAndCommentsAreKnown() {
        let escaped = CommandLineSplitter.scan("cd My\\ No")
        #expect(escaped.commands.last?.last == Word(text: "My No", start: 3))
        #expect(CommandLineSplitter.scan("cd My\\").danglingBackslash)
        #expect(CommandLineSplitter.scan("ls # note").endsInComment)
        #expect(!CommandLineSplitter.scan("ls a#b").endsInComment)
    }
}
