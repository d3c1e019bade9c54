import CofferCore
import Foundation
import Testing

struct NaturalOrderTests {
    @Test func numbersCompareByValue() {
        #expect(["file10", "file2", "file1", "file20"].naturallySorted() == ["file1", "file2", "file10", "file20"])
        #expect(["a100b", "a20b", "a3b"].naturallySorted() == ["a3b", "a20b", "a100b"])
        #expect(["v1.10", "v1.9", "v1.2"].naturallySorted() == ["v1.2", "v1.9", "v1.10"])
        #expect(["x99999999999999999999999", "x100000000000000000000000"].naturallySorted()
                == ["x99999999999999999999999", "x100000000000000000000000"])
    }

    @Test func caseAndAccentsAreIgnoredWithADeterministicTieBreak() {
        let sorted = ["banana", "Apple", "äpple", "apple", "Cherry"].naturallySorted()
        #expect(sorted.prefix(3).map { $0.lowercased().folding(options: .diacriticInsensitive, locale: nil) }
                == ["apple", "apple", "apple"])
        #expect(sorted.suffix(2) == ["banana", "Cherry"])
        // Same input, any order: same output.
        #expect(["apple", "äpple", "Apple"].naturallySorted() == sorted.prefix(3).map { $0 })
    }

    @Test func leadingZerosTieThenBreakDeterministically() {
        let sorted = ["file1", "file01", "file001"].naturallySorted()
        #expect(sorted == ["file001", "file01", "file1"] || sorted == ["file1", "file01", "file001"])
        #expect(["file001", "file1", "file01"].naturallySorted() == sorted)
        #expect(["file02", "file1"].naturallySorted() == ["file1", "file02"])
    }

    @Test func punctuationBeforeDigitsBeforeLetters() {
        #expect(["b", "1", "_a", " x"].naturallySorted() == [" x", "_a", "1", "b"])
    }

    @Test func foldersComeFirstThenTheChosenField() throws {
        let now = Date()
        func node(_ name: String, _ kind: FileNode.Kind, size: Int64 = 0, age: TimeInterval = 0) throws -> FileNode {
            FileNode(path: try VirtualPath(parsing: "/\(name)"), kind: kind, size: size,
                     modificationDate: now.addingTimeInterval(-age), typeIdentifier: "public.data")
        }
        let nodes = [try node("b.txt", .file, size: 5, age: 10), try node("z", .folder, age: 50),
                     try node("a.txt", .file, size: 50, age: 100), try node("c", .folder, age: 1),
                     try node("p.app", .package, age: 5)]
        #expect(nodes.sorted(by: .byName).map(\.name) == ["c", "p.app", "z", "a.txt", "b.txt"])
        #expect(nodes.sorted(by: SortOrder(.name, ascending: false)).map(\.name) == ["z", "p.app", "c", "b.txt", "a.txt"])
        #expect(nodes.sorted(by: SortOrder(.size)).map(\.name).suffix(2) == ["a.txt", "b.txt"])
        #expect(nodes.sorted(by: SortOrder(.modificationDate)).map(\.name) == ["c", "p.app", "z", "b.txt", "a.txt"])
        #expect(nodes.sorted(by: SortOrder(.modificationDate, ascending: true)).map(\.name)
                == ["z", "p.app", "c", "a.txt", "b.txt"])
    }

    @Test func agreesWithFoundationOnCommonNames() {
        let names = (1...60).map { "Track \($0).mp3" } + ["alpha", "Beta", "gamma 2", "gamma 10", "Delta"]
        let ours = names.shuffled().naturallySorted()
        let foundation = names.sorted { $0.localizedStandardCompare($1) == .orderedAscending }
        #expect(ours == foundation)
    }
}
