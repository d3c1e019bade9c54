@testable import CofferJSONRPC
import Foundation
import Testing

/// Params read without `JSONDecoder` are what `JSONDecoder` reads, and whatever it would
/// refuse or treat its own way is left to it.
struct FlatParamsTests {
    func same<Params: Decodable>(_ type: Params.Type, _ text: String) -> (flat: String?, decoder: String?) {
        let data = Data(text.utf8)
        let flat = FlatParams.decode(type, from: data).map { value -> String in
            var out = ""
            dump(value, to: &out)
            return out
        }
        let decoded = (try? JSONDecoder().decode(type, from: data)).map { value -> String in
            var out = ""
            dump(value, to: &out)
            return out
        }
        return (flat, decoded)
    }

    @Test func randomFlatObjectsDecodeAlike() {
        var generator = SystemRandomNumberGenerator()
        let values = ["\"files:/a b\"", "\"/报告\"", "\"x\\\\y\"", "\"a\\u00e9\"", "true", "false", "null", "0", "-0", "7", "1.0",
                      "1e2", "-12", "12345678901234567890", "2.5", "\"name\"", "\"modified\"", "\"bogus\"", "\"text\"",
                      "\"keepBoth\"", "[1]", "{\"a\": 1}", "\"\""]
        let keys = ["path", "hidden", "sort", "descending", "offset", "limit", "length", "encoding", "conflict", "newName",
                    "size", "extra", "path"]
        var flatCount = 0
        for _ in 0..<3000 {
            let count = Int.random(in: 0...5, using: &generator)
            let members = (0..<count).map { _ in
                "\"\(keys.randomElement(using: &generator)!)\": \(values.randomElement(using: &generator)!)"
            }
            let text = "{" + members.joined(separator: ", ") + "}"
            for (flat, decoded) in [same(FilesList.Params.self, text), same(FilesRead.Params.self, text),
                                    same(FilesRename.Params.self, text), same(UploadBegin.Params.self, text),
                                    same(FilesStat.Params.self, text)] {
                if let flat {
                    flatCount += 1
                    #expect(flat == decoded, "\(text)")
                }
            }
        }
        // Many of them (the well-typed ones) are read without the decoder.
        #expect(flatCount > 100)
    }

    @Test func nestedValuesEscapesAndRepeatedKeysAreLeftToTheDecoder() {
        #expect(FlatParams.members(of: Data(#"{"path": "a\"b"}"#.utf8)) == nil)
        #expect(FlatParams.members(of: Data(#"{"types": ["a"]}"#.utf8)) == nil)
        #expect(FlatParams.members(of: Data(#"{"path": "a", "path": "b"}"#.utf8)) == nil)
        #expect(FlatParams.members(of: Data(#"{ "path" : "a" , "limit" : 3 }"#.utf8))?.keys == ["path", "limit"])
        #expect(FlatParams.decode(FilesList.Params.self, from: Data(#"{"path": "/", "limit": 1.0}"#.utf8)) == nil)
    }
}
