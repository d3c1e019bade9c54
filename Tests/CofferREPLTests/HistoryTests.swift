import CofferREPL
import CofferTestSupport
import Testing

struct HistoryTests {
    @Test func dropsBlankLinesAndRepeatsInARow() {
        var history = History()
        let added = ["ls", "ls", "   ", "", "pwd", "ls"].map { history.add($0) }
        #expect(added == [true, false, false, false, true, true])  // the last "ls" is not in a row
        #expect(history.entries == ["ls", "pwd", "ls"])
    }

    @Test func keepsOnlyTheNewestUpToTheLimit() {
        let history = History((1...10).map { "cmd \($0)" }, limit: 3)
        #expect(history.entries == ["cmd 8", "cmd 9", "cmd 10"])
    }

    @Test func aLineWithNewlinesIsKeptOnOneLine() {
        var history = History()
        history.add("mkdir a\nb")
        #expect(history.entries == ["mkdir a b"])
    }

    @Test func fileAppendsEachLineAndLoadsThemBack() {
        let directory = TemporaryDirectory("history")
        let file = HistoryFile(path: directory.url("history"), limit: 5)
        #expect(file.load().entries.isEmpty)
        for line in ["ls", "cd 报告", "pwd"] { file.append(line) }
        #expect(directory.contents("history") == "ls\ncd 报告\npwd\n")
        #expect(file.load().entries == ["ls", "cd 报告", "pwd"])
    }

    @Test func loadingCleansAndCompactsAnOvergrownFile() {
        let directory = TemporaryDirectory("history")
        let file = HistoryFile(path: directory.url("history"), limit: 2)
        for line in ["a", "a", "b", "c", "c"] { file.append(line) }
        #expect(file.load().entries == ["b", "c"])
        // Five lines are more than twice the limit: the file is rewritten.
        #expect(directory.contents("history") == "b\nc\n")
    }
}
