import CofferCore
@testable import CofferMCP
import CofferJSONRPC
import CofferTestSupport
import Foundation
import Testing

@Suite struct PathResolverTests {
    let paths = PathResolver(filesRoot: "/srv/box/Documents/UserFiles", home: "/srv/box/Documents/UserFiles/me")

    @Test func hostPathsInsideTheRootAreFilesPaths() throws {
        #expect(try paths.resolve("/srv/box/Documents/UserFiles").path == .root())
        #expect(try paths.resolve("/srv/box/Documents/UserFiles/").path == .root())
        let inside = try paths.resolve("/srv/box/Documents/UserFiles/a/./b/../c.txt")
        #expect(inside.path.description == "files:/a/c.txt" && inside.style == .host)
        #expect(try paths.resolve("~/notes.md").path.description == "files:/me/notes.md")
        #expect(paths.display(inside.path, .host) == "/srv/box/Documents/UserFiles/a/c.txt")
    }

    @Test func virtualAndRelativePathsAreCoffers() throws {
        let virtual = try paths.resolve("trash:/files")
        #expect(virtual.path.mount == "trash" && virtual.style == .virtual)
        #expect(paths.display(virtual.path, .host) == "trash:/files")  // no host path to show
        #expect(try paths.resolve("docs/a.txt").path.description == "files:/docs/a.txt")
    }

    @Test(arguments: [
        "/srv/box/Documents/UserFiles-evil/x",      // a sibling sharing the prefix
        "/srv/box/Documents/UserFiles/../Trash/x",  // out by ..
        "/srv/box/Documents/UserFiles/a/../../x",
        "/etc/passwd",
        "files:/../x",
    ])
    func pathsOutsideAreRefused(_ text: String) {
        #expect(throws: CofferError.self) { try paths.resolve(text) }
        do { _ = try paths.resolve(text) } catch { #expect(error.kind == .outsideSandbox) }
    }

    @Test func nulAndEmptyPathsAreBadArguments() {
        #expect((try? paths.resolve("")) == nil)
        do { _ = try paths.resolve("a\u{0}b") } catch { #expect(error.kind == .invalidName) }
    }
}

@Suite struct TextEditingTests {
    @Test func anExactMatchReplacesTheFirstOccurrence() throws {
        #expect(try TextEditing.apply([TextEdit(oldText: "b", newText: "B")], to: "a b c b") == "a B c b")
    }

    @Test func linesMatchIgnoringTheirIndentationAndKeepTheFiles() throws {
        let file = "struct A {\n        var x = 1\n        var y = 2\n}\n"
        let edit = TextEdit(oldText: "var x = 1\n  var y = 2", newText: "var x = 10\n  var y = 20\n  var z = 30")
        #expect(try TextEditing.apply([edit], to: file) == "struct A {\n        var x = 10\n        var y = 20\n        var z = 30\n}\n")
    }

    @Test func crlfIsComparedAsLF() throws {
        #expect(try TextEditing.apply([TextEdit(oldText: "a\r\nb", newText: "x")], to: "a\nb\nc") == "x\nc")
    }

    @Test func aMissNamesTheEditAndTheClosestLines() {
        let file = (1...50).map { "line number \($0)" }.joined(separator: "\n")
        do {
            _ = try TextEditing.apply([TextEdit(oldText: "line number 1", newText: "one"),
                                       TextEdit(oldText: "line numbr 42\nline number 43", newText: "x")], to: file)
            Issue.record("the second edit matches nothing")
        } catch {
            #expect(error.index == 2 && error.count == 2)
            #expect(error.closest?.line == 42)
            #expect(error.closest?.text == "line number 42\nline number 43")
        }
    }
}

@Suite struct UnifiedDiffTests {
    @Test func aChangedLineIsADeletionThenAnInsertionWithContext() {
        let old = (1...20).map(String.init).joined(separator: "\n")
        let new = old.replacingOccurrences(of: "\n10\n", with: "\nten\n")
        let diff = UnifiedDiff.make(from: old, to: new, name: "f")
        #expect(diff == "--- f\toriginal\n+++ f\tmodified\n@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n")
    }

    @Test func distantChangesAreSeparateHunks() {
        let old = (1...40).map(String.init).joined(separator: "\n")
        let new = old.replacingOccurrences(of: "\n5\n", with: "\nfive\n").replacingOccurrences(of: "\n35\n", with: "\n")
        let diff = UnifiedDiff.make(from: old, to: new, name: "f")
        #expect(diff.components(separatedBy: "\n@@ ").count == 3, "\(diff)")
        #expect(diff.contains("@@ -32,7 +32,6 @@\n 32\n 33\n 34\n-35\n 36\n"))
    }

    @Test func noChangeIsNoHunk() {
        #expect(UnifiedDiff.make(from: "a\nb", to: "a\nb", name: "f") == "--- f\toriginal\n+++ f\tmodified\n")
    }
}

@Suite struct EraTests {
    @Test func aRequestSaysItsEra() throws {
        #expect(try Era(nil) == .handshake)
        #expect(try Era(RequestMeta(protocolVersion: "2026-07-28")) == .stateless)
        #expect(try Era(RequestMeta(protocolVersion: "2025-06-18")) == .handshake)
        do {
            _ = try Era(RequestMeta(protocolVersion: "2030-01-01"))
            Issue.record("an unknown revision is refused")
        } catch {
            #expect(error.code == -32022)
            #expect(error.data?["requested"] as? String == "2030-01-01")
        }
    }

    @Test func resultsOfTheStatelessEraCarryItsFields() {
        let server = ServerInfo(name: "coffer", version: "1")
        let stateless = MCPResult(["tools": []], era: .stateless, server: server, cacheable: true)
        #expect(stateless.body["resultType"] == "complete" && stateless.body["ttlMs"] != nil && stateless.body["cacheScope"] == "private")
        let legacy = MCPResult(["tools": []], era: .handshake, server: server, cacheable: true)
        #expect(legacy.body.keys.sorted() == ["tools"])
    }

    @Test func jsonIsWrittenWithSortedKeysAndEscapes() {
        let value: JSONValue = ["b": "line\n\"quoted\"", "a": [1, true, .null, .number(1.5)], "中": "文"]
        #expect(value.jsonText == #"{"a":[1,true,null,1.5],"b":"line\n\"quoted\"","中":"文"}"#)
        let decoded = try? JSONDecoder().decode(JSONValue.self, from: Data(value.jsonText.utf8))
        #expect(decoded == value)
    }
}

@Suite struct ContentSearchGlobTests {
    @Test func patternsMatchTheRelativePathOrTheName() throws {
        let swift = try Globs(patterns: ["*.swift"])
        #expect(swift.matches(relative: "src/deep/a.swift", name: "a.swift"))
        #expect(!swift.matches(relative: "src/a.swiftx", name: "a.swiftx"))
        let docs = try Globs(patterns: ["docs/*.md"])
        #expect(docs.matches(relative: "docs/a.md", name: "a.md"))
        #expect(!docs.matches(relative: "other/a.md", name: "a.md"))
        #expect(try Globs(patterns: ["node_modules"]).matches(relative: "a/node_modules", name: "node_modules"))
    }
}

@Suite struct ToolCatalogTests {
    @Test func everyToolIsListedAndEveryListingHasATool() {
        let listed = Set(ToolCatalog.entries.map(\.name))
        for tool in Toolbox.all { #expect(listed.contains(tool.name), "\(tool.name) is not in tools.json") }
        for entry in ToolCatalog.entries { #expect(Toolbox.named[entry.name] != nil, "\(entry.name) has no tool") }
        #expect(Toolbox.listings(.all).count == ToolCatalog.entries.count)
        #expect(Toolbox.named["read_file"]?.name == "read_text_file")
    }

    @Test func listingsAreWholeSchemasWithNoReferenceLeft() {
        for listing in Toolbox.listings(ToolChoice(names: nil, structured: true)) {
            let text = listing.jsonText
            #expect(!text.contains("\"#"), "\(listing["name"]?.string ?? "?") keeps a reference")
            #expect(listing["outputSchema"]?["properties"]?["content"] != nil)
            #expect(listing["inputSchema"]?["type"]?.string == "object")
            // openWorldHint defaults to true: given (false) for every tool but the one that reaches the web.
            #expect((listing["annotations"]?["openWorldHint"] == nil) == (listing["name"] == "download_file"))
        }
    }

    /// The default list is lean: no output schemas; `official` is the reference server's 14 tools,
    /// within 1.2 times the 13.0 KB its own list takes.
    @Test func theDefaultListIsLeanAndOfficialIsTheReferenceTools() throws {
        #expect(Toolbox.listings(.all).allSatisfy { $0["outputSchema"] == nil })
        let official = try ToolChoice(parsing: "official")
        let listings = Toolbox.listings(official)
        #expect(Set(listings.compactMap { $0["name"]?.string }) == ToolChoice.referenceTools)
        let bytes = JSONValue.array(listings).jsonText.utf8.count
        #expect(bytes <= 15_600, "the 14 reference tools take \(bytes) bytes")
        let chosen = try ToolChoice(parsing: "read_text_file, find_files")
        #expect(Toolbox.listings(chosen).compactMap { $0["name"]?.string } == ["read_text_file", "find_files"])
        #expect(throws: ToolChoiceError.self) { try ToolChoice(parsing: "read_text_file,rm_rf") }
    }
}
