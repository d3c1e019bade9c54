import CofferCore
import Foundation

extension BackendConformance {
    /// Every check, in the order they run: reading, changing, refusing changes, then the
    /// checks of capabilities, which run only for backends that adopt them.
    public static let checks: [Check] = readingChecks + writingChecks + [refusesChanges] + capabilityChecks

    // MARK: Reading (every backend)

    static let readingChecks: [Check] = [
        Check(name: "root is a folder", applies: .all) { context in
            let root = try await context.backend.node(at: context.root)
            try context.expect(root.kind == .folder, "the root is a \(root.kind)")
            try context.expect(root.path == context.root, "the root's node has path \(root.path)")
        },

        Check(name: "listing", applies: .all) { context in
            for folder in ["", "Folder", "Folder/Sub"] {
                let nodes = try await context.backend.contentsOfFolder(at: context.path(folder))
                let names = nodes.map { Array($0.name.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
                try context.expect(names == context.fixtureNames(in: folder),
                                   "“\(folder)” lists \(nodes.map(\.name)), expected the fixture's names, each once")
                for node in nodes {
                    let relative = folder.isEmpty ? node.name : folder + "/" + node.name
                    let item = fixture.first { $0.path.utf8.elementsEqual(relative.utf8) }!
                    try context.expect(node.path == context.path(relative), "\(relative) is listed with path \(node.path)")
                    try context.expect(item.isFolder ? node.kind != .file : node.kind == .file,
                                       "\(relative) is listed as a \(node.kind)")
                    if let contents = item.contents {
                        try context.expect(node.size == Int64(contents.count),
                                           "\(relative) is listed with size \(node.size), not \(contents.count)")
                    }
                    try context.expect(node.isHidden == node.name.hasPrefix("."),
                                       "\(relative) is listed with hidden = \(node.isHidden)")
                }
            }
        },

        Check(name: "stat", applies: .all) { context in
            for item in fixture {
                let node = try await context.backend.node(at: context.path(item.path))
                try context.expect(node.path == context.path(item.path), "node(at: \(item.path)) has path \(node.path)")
                try context.expect(item.isFolder ? node.kind != .file : node.kind == .file, "\(item.path) is a \(node.kind)")
                if let contents = item.contents {
                    try context.expect(node.size == Int64(contents.count), "\(item.path) has size \(node.size)")
                }
            }
            let missing = context.path("nope.txt")
            try await context.expectError([.noSuchFile], about: missing, "node(at:) of a missing item") {
                _ = try await context.backend.node(at: missing)
            }
            let deeper = context.path("Missing/nope.txt")
            try await context.expectError([.noSuchFile], about: deeper, "node(at:) inside a missing folder") {
                _ = try await context.backend.node(at: deeper)
            }
            let inFile = context.path("hello.txt/x")
            try await context.expectError([.notADirectory, .noSuchFile], about: inFile, "node(at:) inside a file") {
                _ = try await context.backend.node(at: inFile)
            }
            try await context.expectError([.notADirectory, .noSuchFile], about: context.path("hello.txt"),
                                          "listing a file") {
                _ = try await context.backend.contentsOfFolder(at: context.path("hello.txt"))
            }
        },

        Check(name: "read whole files", applies: .all) { context in
            for item in fixture where !item.isFolder {
                for chunk in [7, 65_536] {
                    let bytes = try await context.contents(item.path, chunk: chunk)
                    try context.expect(bytes == item.contents!,
                                       "\(item.path) read in chunks of \(chunk) gave \(bytes.count) bytes that differ")
                }
                let file = try await context.backend.openFile(at: context.path(item.path))
                try context.expect(file.size == Int64(item.contents!.count), "\(item.path) opened with size \(file.size)")
                _ = try await file.read(upTo: 1 << 20)
                let after = try await file.read(upTo: 10)
                try context.expect(after.isEmpty, "reading \(item.path) past its end gave \(after.count) bytes")
                await file.close()
            }
        },

        Check(name: "read ranges", applies: .all) { context in
            let big = context.file("big.bin")
            for (offset, count) in [(0, 10), (150_000, 65_536), (299_990, 100), (300_001, 10), (400_000, 10)] {
                let file = try await context.backend.openFile(at: context.path("big.bin"))
                let bytes = try await file.read(at: Int64(offset), upTo: count)
                await file.close()
                let expected = Array(big[min(offset, big.count)..<min(big.count, offset + count)])
                try context.expect(bytes == expected,
                                   "read(at: \(offset), upTo: \(count)) gave \(bytes.count) bytes, expected \(expected.count) that match")
            }
        },

        Check(name: "read errors", applies: .all) { context in
            try await context.expectError([.isADirectory], about: context.path("Folder"), "openFile(at:) of a folder") {
                _ = try await context.backend.openFile(at: context.path("Folder"))
            }
            try await context.expectError([.noSuchFile], about: context.path("nope.txt"), "openFile(at:) of a missing file") {
                _ = try await context.backend.openFile(at: context.path("nope.txt"))
            }
        },

        Check(name: "names kept byte for byte", applies: .all) { context in
            for name in ["caf\u{E9}.txt", "cafe\u{301}.txt", "名字 with spaces.txt"] {
                let bytes = try await context.contents(name)
                try context.expect(bytes == context.file(name),
                                   "“\(name)” (\(Array(name.utf8).count) bytes of name) reads “\(String(decoding: bytes, as: UTF8.self))”")
            }
        },

        Check(name: "batch reads", applies: .all) { context in
            let entries = try await context.backend.entries(inFolderAt: context.root)
            let listed = try await context.backend.contentsOfFolder(at: context.root)
            try context.expect(entries.count == listed.count, "entries(inFolderAt:) gave \(entries.count) entries, the listing \(listed.count)")
            for entry in entries {
                guard let node = listed.first(where: { $0.name.utf8.elementsEqual(entry.name.utf8) }) else {
                    throw Violation(message: "entries(inFolderAt:) gave “\(entry.name)”, which the listing lacks")
                }
                try context.expect((entry.kind == .folder) == (node.kind != .file) && entry.isHidden == node.isHidden,
                                   "entries(inFolderAt:) describes “\(entry.name)” differently from the listing")
            }
            let batches = await context.backend.entries(inFoldersAt: [context.root, context.path("Folder"), context.path("Nope")])
            try context.expect(batches.count == 3, "entries(inFoldersAt:) gave \(batches.count) results for 3 folders")
            if case .failure(let error) = batches[0] { throw Violation(message: "entries(inFoldersAt:) failed for the root: \(error)") }
            guard case .success(let folder) = batches[1] else { throw Violation(message: "entries(inFoldersAt:) failed for Folder") }
            try context.expect(Set(folder.map(\.name)) == ["b.txt", "Sub"], "entries(inFoldersAt:) lists Folder as \(folder.map(\.name))")
            guard case .failure(let error) = batches[2] else { throw Violation(message: "entries(inFoldersAt:) read a missing folder") }
            try context.expect(error.kind == .noSuchFile, "entries(inFoldersAt:) of a missing folder failed with \(error.kind)")
            let nodes = await context.backend.nodes(at: [context.path("hello.txt"), context.path("nope"), context.path("Folder/b.txt")])
            try context.expect(nodes.count == 3 && nodes[0]?.size == 12 && nodes[1] == nil && nodes[2]?.size == 1,
                               "nodes(at:) gave \(nodes.map { $0.map { "\($0.name) \($0.size)" } ?? "nil" })")
            let dates = try await context.backend.folderModificationDates(
                at: [context.root, context.path("Folder"), context.path("hello.txt"), context.path("nope")])
            try context.expect(dates.count == 4 && dates[0] != nil && dates[1] != nil && dates[2] == nil && dates[3] == nil,
                               "folderModificationDates(at:) gave \(dates) for a folder, a folder, a file and nothing")
        },

        Check(name: "concurrent reads", applies: .all) { context in
            let files = ["hello.txt", "big.bin", "Folder/b.txt", "caf\u{E9}.txt", "cafe\u{301}.txt"]
            let wrong = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<40 {
                    let name = files[index % files.count]
                    group.addTask {
                        let bytes = try await context.contents(name, chunk: 4_096 + index)
                        _ = try await context.backend.node(at: context.path(name))
                        return bytes == context.file(name) ? nil : name
                    }
                }
                var wrong: [String] = []
                for try await name in group { if let name { wrong.append(name) } }
                return wrong
            }
            try context.expect(wrong.isEmpty, "reads running together gave wrong contents for \(wrong)")
        },
    ]

    // MARK: Changing (writable backends)

    static let writingChecks: [Check] = [
        Check(name: "create folder", applies: .writable) { context in
            try await context.backend.createFolder(at: context.path("New 新建"))
            let node = try await context.backend.node(at: context.path("New 新建"))
            try context.expect(node.kind == .folder, "a created folder is a \(node.kind)")
            try context.expect(try await context.names().contains(Array("New 新建".utf8)), "a created folder is not listed")
            try await context.expectError([.fileExists], about: context.path("Folder"), "createFolder over a folder") {
                try await context.backend.createFolder(at: context.path("Folder"))
            }
            try await context.expectError([.fileExists], about: context.path("hello.txt"), "createFolder over a file") {
                try await context.backend.createFolder(at: context.path("hello.txt"))
            }
            try await context.expectError([.noSuchFile], about: context.path("Missing/x"), "createFolder in a missing folder") {
                try await context.backend.createFolder(at: context.path("Missing/x"))
            }
        },

        Check(name: "atomic write", applies: .writable) { context in
            let before = try await context.names()
            let write = try await context.backend.makeWrite(at: context.path("new.txt"))
            try await write.write(Array("abc".utf8))
            try await write.write(Array("def".utf8))
            try await context.expectError([.noSuchFile], about: context.path("new.txt"), "node(at:) of a write not yet committed") {
                _ = try await context.backend.node(at: context.path("new.txt"))
            }
            try context.expect(try await context.names() == before, "a write not yet committed changes the listing")
            try await write.commit(conflict: .fail)
            try context.expect(try await context.contents("new.txt") == Array("abcdef".utf8), "a committed write reads back differently")
            try context.expect(try await context.names().count == before.count + 1, "a commit adds more than its file to the listing")

            let aborted = try await context.backend.makeWrite(at: context.path("gone.txt"))
            try await aborted.write([1, 2, 3])
            await aborted.abort()
            let overwrite = try await context.backend.makeWrite(at: context.path("hello.txt"))
            try await overwrite.write(Array("X".utf8))
            await overwrite.abort()
            try context.expect(try await context.names().count == before.count + 1, "an aborted write left something in the listing")
            try await context.expectError([.noSuchFile], about: context.path("gone.txt"), "node(at:) after an abort") {
                _ = try await context.backend.node(at: context.path("gone.txt"))
            }
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"),
                               "an aborted write to an existing name changed it")
        },

        Check(name: "commit conflicts", applies: .writable) { context in
            let refused = try await context.backend.makeWrite(at: context.path("hello.txt"))
            try await refused.write(Array("new".utf8))
            try await context.expectError([.fileExists], about: context.path("hello.txt"), "commit(.fail) over a file") {
                try await refused.commit(conflict: .fail)
            }
            await refused.abort()
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"),
                               "commit(.fail) over a file changed it")
            try context.expect(try await context.names() == context.fixtureNames(in: ""), "a refused commit changed the listing")
            let replacing = try await context.backend.makeWrite(at: context.path("hello.txt"))
            try await replacing.write(Array("new".utf8))
            try await replacing.commit(conflict: .replace)
            try context.expect(try await context.contents("hello.txt") == Array("new".utf8), "commit(.replace) did not replace")
        },

        Check(name: "rename and move", applies: .writable) { context in
            let backend = context.backend
            try await backend.moveItem(at: context.path("hello.txt"), to: context.path("renamed.txt"), conflict: .fail)
            try context.expect(try await context.contents("renamed.txt") == context.file("hello.txt"), "a renamed file reads differently")
            try await context.expectError([.noSuchFile], about: context.path("hello.txt"), "node(at:) of a renamed file's old name") {
                _ = try await backend.node(at: context.path("hello.txt"))
            }
            try await backend.moveItem(at: context.path("renamed.txt"), to: context.path("Folder/renamed.txt"), conflict: .fail)
            try await backend.moveItem(at: context.path("Folder"), to: context.path("Moved 移动"), conflict: .fail)
            try context.expect(try await context.contents("Moved 移动/Sub/deep.txt") == Array("deep".utf8),
                               "a moved folder lost what it held")
            try context.expect(try await context.contents("Moved 移动/renamed.txt") == context.file("hello.txt"),
                               "a file moved into a folder reads differently")
            try await context.expectError([.fileExists], about: context.path("Moved 移动/b.txt"), "moveItem(.fail) onto a file") {
                try await backend.moveItem(at: context.path("big.bin"), to: context.path("Moved 移动/b.txt"), conflict: .fail)
            }
            let kept = try await context.contents("Moved 移动/b.txt"), source = try await context.contents("big.bin")
            try context.expect(kept == Array("b".utf8) && source == context.file("big.bin"), "a refused move changed something")
            try await backend.moveItem(at: context.path("big.bin"), to: context.path("Moved 移动/b.txt"), conflict: .replace)
            try context.expect(try await context.contents("Moved 移动/b.txt") == context.file("big.bin"), "moveItem(.replace) did not replace")
            try await context.expectError([.noSuchFile], about: context.path("big.bin"), "node(at:) of a moved file") {
                _ = try await backend.node(at: context.path("big.bin"))
            }
            try await context.expectError([.noSuchFile], about: nil, "moving a missing item") {
                try await backend.moveItem(at: context.path("nope"), to: context.path("x"), conflict: .fail)
            }
            try await context.expectError([.noSuchFile], about: nil, "moving into a missing folder") {
                try await backend.moveItem(at: context.path(".dotfile"), to: context.path("Missing/x"), conflict: .fail)
            }
            try context.expect(try await context.contents(".dotfile") == context.file(".dotfile"), "a failed move changed its source")
        },

        Check(name: "copy", applies: .writable) { context in
            let backend = context.backend
            try await backend.copyItem(at: context.path("hello.txt"), to: context.path("hello copy.txt"), conflict: .fail,
                                       progress: .none)
            try await backend.copyItem(at: context.path("Folder"), to: context.path("Folder copy"), conflict: .fail,
                                       progress: .none)
            try context.expect(try await context.contents("hello copy.txt") == context.file("hello.txt"), "a copied file differs")
            let copied = try await context.contents("Folder copy/Sub/deep.txt")
            let original = try await context.contents("Folder/Sub/deep.txt")
            try context.expect(copied == Array("deep".utf8) && original == Array("deep".utf8), "a copied folder differs")
            try await context.expectError([.fileExists], about: nil, "copyItem(.fail) onto a file") {
                try await backend.copyItem(at: context.path("hello.txt"), to: context.path("big.bin"), conflict: .fail,
                                           progress: .none)
            }
            try context.expect(try await context.contents("big.bin") == context.file("big.bin"), "a refused copy changed its destination")
            let names = try await context.names()
            try context.expect(names.count == context.fixtureNames(in: "").count + 2,
                               "copies left other items in the listing: \(names.map { String(decoding: $0, as: UTF8.self) })")
        },

        Check(name: "remove", applies: .writable) { context in
            try await context.backend.removeItem(at: context.path("hello.txt"))
            try await context.backend.removeItem(at: context.path("Folder"))
            for gone in ["hello.txt", "Folder", "Folder/Sub/deep.txt"] {
                try await context.expectError([.noSuchFile], about: context.path(gone), "node(at:) of a removed item") {
                    _ = try await context.backend.node(at: context.path(gone))
                }
            }
            try await context.expectError([.noSuchFile], about: context.path("nope"), "removing a missing item") {
                try await context.backend.removeItem(at: context.path("nope"))
            }
        },

        Check(name: "names on write", applies: .writable) { context in
            let names = ["r\u{E9}sum\u{E9}.txt", "re\u{301}sume\u{301}.txt", "报告 2026 (final).txt", " leading space.txt"]
            for (index, name) in names.enumerated() {
                try await context.writeFile(at: context.path(name), [UInt8(index)])
            }
            for (index, name) in names.enumerated() {
                try context.expect(try await context.contents(name) == [UInt8(index)], "“\(name)” reads back another file's bytes")
            }
            try context.expect(try await context.names().count == context.fixtureNames(in: "").count + names.count,
                               "NFC and NFD spellings were merged into one item")
        },

        Check(name: "concurrent writes", applies: .writable) { context in
            let backend = context.backend
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<24 {
                    group.addTask {
                        let write = try await backend.makeWrite(at: context.path("f\(index).txt"))
                        try await write.write(Array("file \(index)".utf8))
                        try await write.commit(conflict: .fail)
                    }
                }
                try await group.waitForAll()
            }
            for index in 0..<24 {
                try context.expect(try await context.contents("f\(index).txt") == Array("file \(index)".utf8),
                                   "f\(index).txt, written alongside others, reads differently")
            }
            let winners = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let write = try await backend.makeWrite(at: context.path("race.txt"))
                        try await write.write(Array("writer \(index)".utf8))
                        do {
                            try await write.commit(conflict: .fail)
                            return index
                        } catch let error as CofferError where error.kind == .fileExists {
                            await write.abort()
                            return nil
                        }
                    }
                }
                var winners: [Int] = []
                for try await winner in group { if let winner { winners.append(winner) } }
                return winners
            }
            try context.expect(winners.count == 1, "\(winners.count) of 8 commits with .fail to one name succeeded")
            try context.expect(try await context.contents("race.txt") == Array("writer \(winners[0])".utf8),
                               "the name holds another writer's bytes than the one whose commit succeeded")
        },

        Check(name: "modification date", applies: .writable) { context in
            let date = Date(timeIntervalSince1970: 1_000_000_000.5)
            try await context.writeFile(at: context.path("dated.txt"), [1], modified: date)
            let node = try await context.backend.node(at: context.path("dated.txt"))
            try context.expect(abs(node.modificationDate.timeIntervalSince(date)) < 0.001,
                               "the modification date set before commit reads back as \(node.modificationDate)")
        },
    ]

    // MARK: Read-only backends

    static let refusesChanges = Check(name: "refuses changes", applies: .readOnly) { context in
        let backend = context.backend
        try context.expect(!backend.capabilities.contains(.writable), "a read-only backend claims .writable")
        try await context.expectError([.readOnly], about: nil, "createFolder") {
            try await backend.createFolder(at: context.path("New"))
        }
        try await context.expectError([.readOnly], about: nil, "makeWrite") {
            _ = try await backend.makeWrite(at: context.path("new.txt"))
        }
        try await context.expectError([.readOnly], about: nil, "moveItem") {
            try await backend.moveItem(at: context.path("hello.txt"), to: context.path("moved.txt"), conflict: .fail)
        }
        try await context.expectError([.readOnly], about: nil, "removeItem") {
            try await backend.removeItem(at: context.path("hello.txt"))
        }
        try context.expect(try await context.names() == context.fixtureNames(in: ""), "refused changes changed the listing")
    }
}
