@testable import CofferMCP
import Testing

/// `directory_tree`'s and `search_files`' exclusions, read as the reference server reads them.
@Suite struct ReferenceExclusionTests {
    /// `directory_tree`'s excludes: a name without `*` also excludes it anywhere, and all below it.
    @Test func treeExclusionsTakeANameAnywhere() throws {
        let exclude = try ReferenceExclusion.tree(["node_modules", "*.log"])
        #expect(exclude.matches("node_modules") && exclude.matches("a/node_modules") && exclude.matches("a/node_modules/x"))
        #expect(exclude.matches("x.log") && !exclude.matches("sub/x.log"))
        #expect(!exclude.matches("src/main.swift"))
        let search = try ReferenceExclusion.searching(["node_modules"])
        #expect(search.matches("node_modules") && !search.matches("a/node_modules"))
    }
}
