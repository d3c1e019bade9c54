@testable import CofferBackends
import CofferCore
import CofferRuntime
import Foundation
import Testing

/// Messages that say where the fault is: never a hidden partial's path, never the trash's
/// advice for storage the system will not write.
struct FaultMessageTests {
    @Test func aFaultInsideAPartialNamesWhatItWasBecoming() throws {
        let destination = try VirtualPath(parsing: "files:/Import/Album")
        let inside = try VirtualPath(parsing: "files:/Import").appending(trustedName: PartialName.make())
            .appending(trustedName: "Sub").appending(trustedName: "b.txt")
        let error = CofferError(.outOfSpace, path: inside).namingPartial(as: destination)
        #expect(error.path?.description == "files:/Import/Album/Sub/b.txt")
        let plain = CofferError(.outOfSpace, path: destination).namingPartial(as: try VirtualPath(parsing: "files:/x"))
        #expect(plain.path == destination)
    }

    @Test func readOnlyStorageIsNotTheReadOnlyTrash() throws {
        let path = try VirtualPath(parsing: "files:/notes.txt")
        let storage = CofferError.system(EROFS, "openat", path: path).userMessage(in: .english)
        #expect(storage.text.contains("mounted read-only"))
        #expect(!storage.hint.contains("Copy the item to files:"))
        let chinese = CofferError.system(EROFS, "openat", path: path).userMessage(in: .simplifiedChinese)
        #expect(chinese.text.contains("只读") && !chinese.hint.contains("files:"))
        // The trash, a mount Coffer keeps read-only, keeps its advice.
        let trash = CofferError(.readOnly, path: try VirtualPath(parsing: "trash:/a")).userMessage(in: .english)
        #expect(trash.hint.contains("Copy the item to files:"))
    }
}
