import CofferCore
@testable import CofferJSONRPC
import Foundation
import Testing

/// Answers written by hand are the bytes `JSONEncoder` writes for them.
struct JSONWritableTests {
    @Test(arguments: ["notes.txt", "a \"quoted\" \\ name", "tab\there\nnewline\u{1}\u{1f}\u{7f}", "报告 2026/é",
                      "e\u{301}", "🙂 emoji", ".hidden", String(repeating: "x", count: 255)])
    func aNodeIsWrittenAsTheEncoderWritesIt(_ name: String) throws {
        let base = try VirtualPath(parsing: "files:/Docs")
        let variants = [
            FileNode(path: base.appending(trustedName: name), kind: .file, size: 1234, modificationDate: Date(timeIntervalSince1970: 1_764_612_345.678),
                     creationDate: Date(timeIntervalSince1970: 1_700_000_000.001), isHidden: true, typeIdentifier: "public.plain-text"),
            FileNode(path: base.appending(trustedName: name), kind: .folder, modificationDate: Date(timeIntervalSince1970: 0),
                     typeIdentifier: "public.folder", isExcludedFromBackup: true),
            FileNode(path: base.appending(trustedName: name), kind: .file, size: 9, modificationDate: Date(timeIntervalSince1970: 86_400.5),
                     typeIdentifier: "public.symlink", special: .symbolicLink, linkTarget: "../\(name)"),
        ]
        for node in variants {
            let result = NodeResult(node)
            let written = try JSONEncoder.rpcData(result)
            let encoded = try JSONEncoder.rpc.encode(result)
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
        }
    }

    @Test func listingsAndSearchResultsAreWrittenAsTheEncoderWritesThem() throws {
        let nodes = try ["a.txt", "报告 \"1\"", "x\ty"].map { name in
            NodeResult(FileNode(path: try VirtualPath(parsing: "files:/").appending(trustedName: name), kind: .file, size: 3,
                                modificationDate: Date(timeIntervalSince1970: 1_000_000.25), typeIdentifier: "public.data"))
        }
        for count in [0, 1, 3] {
            let list = FilesList.Result(entries: Array(nodes.prefix(count)), total: count * 7)
            #expect(try JSONEncoder.rpcData(list) == JSONEncoder.rpc.encode(list))
            let search = FilesSearch.Result(matches: Array(nodes.prefix(count)), truncated: count == 1, engine: "index",
                                            unreadable: Array(["files:/a", "files:/\"b\""].prefix(count)))
            #expect(try JSONEncoder.rpcData(search) == JSONEncoder.rpc.encode(search))
        }
    }
}
