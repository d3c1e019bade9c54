import CofferCore
import Testing

struct UniqueNameTests {
    @Test(arguments: [
        ("report.pdf", "report (2).pdf"),
        ("a.tar.gz", "a (2).tar.gz"),
        ("Makefile", "Makefile (2)"),
        (".bashrc", ".bashrc (2)"),
        ("photo.2024.jpg", "photo.2024 (2).jpg"),
        ("x (2).pdf", "x (3).pdf"),
        ("报告.docx", "报告 (2).docx"),
        ("trailing.", "trailing. (2)"),
    ])
    func firstCandidate(_ name: String, expected: String) {
        #expect(Array(UniqueName.candidates(for: name).prefix(1)) == [expected])
    }

    @Test func candidatesCount() {
        #expect(Array(UniqueName.candidates(for: "a.txt").prefix(3)) == ["a (2).txt", "a (3).txt", "a (4).txt"])
    }

    @Test func longNamesStayWithinTheLimit() {
        let name = String(repeating: "长", count: 83) + ".txt"  // 253 bytes
        let candidate = Array(UniqueName.candidates(for: name).prefix(1))[0]
        #expect(candidate.utf8.count <= 255)
        #expect(candidate.hasSuffix(" (2).txt"))
    }

    @Test func claimTriesTheNameThenEachCandidate() throws {
        var tried: [String] = []
        let placed = try UniqueName.claim("a.txt") { name throws(CofferError) -> String? in
            tried.append(name)
            return tried.count == 3 ? name : nil
        }
        #expect(placed == "a (3).txt")
        #expect(tried == ["a.txt", "a (2).txt", "a (3).txt"])
    }

    @Test func claimSkipsAndGivesUpAtItsLimit() throws {
        var tried: [String] = []
        let none: String? = try UniqueName.claim("a.txt", skipping: 2, limit: 5) { name throws(CofferError) -> String? in
            tried.append(name)
            return nil
        }
        #expect(none == nil)
        #expect(tried == ["a (3).txt", "a (4).txt", "a (5).txt"])
    }

    @Test func claimPassesOnWhatPlacingThrows() async {
        await #expect(throws: CofferError.self) {
            _ = try await UniqueName.claim("a.txt") { _ async throws(CofferError) -> String? in
                throw CofferError(.outOfSpace)
            }
        }
    }
}
