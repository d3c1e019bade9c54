import CofferCore
import Testing

struct VirtualPathTests {
    @Test(arguments: [
        ("files:/a/b", "files", ["a", "b"]),
        ("/a/./b//c/", "files", ["a", "b", "c"]),
        ("trash:", "trash", []),
        ("trash:/x/../y", "trash", ["y"]),
        ("a/../b", "files", ["b"]),
        ("notes:v2.txt", "files", ["notes:v2.txt"]),
        ("报告/2026 年", "files", ["报告", "2026 年"]),
    ])
    func parses(_ text: String, mount: String, components: [String]) throws {
        let path = try VirtualPath(parsing: text)
        #expect(path.mount == mount)
        #expect(path.components == components)
    }

    @Test func relativePathsStartFromTheBase() throws {
        let base = try VirtualPath(parsing: "files:/Download")
        #expect(try VirtualPath(parsing: "a.pdf", relativeTo: base).description == "files:/Download/a.pdf")
        #expect(try VirtualPath(parsing: "..", relativeTo: base).description == "files:/")
        #expect(try VirtualPath(parsing: "/x", relativeTo: base).description == "files:/x")
        #expect(try VirtualPath(parsing: "trash:/t", relativeTo: base).description == "trash:/t")
    }

    @Test(arguments: ["..", "/..", "a/../..", "files:/../etc/passwd", "trash:/a/../../b"])
    func refusesLeavingTheMount(_ text: String) {
        #expect(throws: CofferError.self) { try VirtualPath(parsing: text) }
        do { _ = try VirtualPath(parsing: text) } catch { #expect(error.kind == .outsideSandbox) }
    }

    @Test func refusesNULAndOverlongNames() {
        do { _ = try VirtualPath(parsing: "a\u{0}b"); Issue.record("NUL accepted") } catch {
            #expect(error.kind == .invalidName)
        }
        let long = String(repeating: "é", count: 128)  // 256 bytes
        do { _ = try VirtualPath(parsing: "/x/\(long)"); Issue.record("long name accepted") } catch {
            #expect(error.kind == .invalidName)
            #expect(error.detail == "too-long")
        }
        #expect(throws: Never.self) { try VirtualPath(parsing: String(repeating: "a", count: 255)) }
    }

    @Test(arguments: [("", FileName.Problem.empty), (".", .dotName), ("..", .dotName), ("a/b", .containsSlash),
                      ("a\u{0}", .containsNUL), (String(repeating: "x", count: 256), .tooLong)])
    func nameValidation(_ name: String, problem: FileName.Problem) {
        #expect(FileName.problem(with: name) == problem)
    }

    @Test func nfcAndNfdAreDifferentPaths() throws {
        let composed = try VirtualPath(parsing: "/caf\u{E9}")
        let decomposed = try VirtualPath(parsing: "/cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
    }

    @Test func containment() throws {
        let folder = try VirtualPath(parsing: "/a")
        #expect(folder.contains(try VirtualPath(parsing: "/a/b")))
        #expect(!folder.contains(try VirtualPath(parsing: "/ab")))
        #expect(!folder.contains(try VirtualPath(parsing: "trash:/a/b")))
    }
}

/// Shortening a name to a number of bytes cuts between characters, never inside one.
@Test func aNameIsShortenedBetweenCharacters() {
    #expect(FileName.prefix(of: "报告.txt", fittingIn: 5) == "报")  // 3 bytes each: the second does not fit
    #expect(FileName.prefix(of: "e\u{301}x", fittingIn: 2) == "")  // é as two scalars is one character of 3 bytes
    #expect(FileName.prefix(of: "abc", fittingIn: 10) == "abc")
    #expect(TrashInfo.idBase(for: String(repeating: "y", count: 300)).utf8.count == 255 - TrashInfo.suffix.utf8.count - 12)
}
