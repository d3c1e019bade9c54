import CofferCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension BackendConformance {
    // MARK: Capabilities (backends that adopt them)

    /// Checks of what a backend adds beyond `StorageBackend`: each runs only for a backend
    /// that adopts the capability (or whose files do) and is reported as not applicable for
    /// the others, neither passed nor failed.
    static let capabilityChecks: [Check] = [
        Check(name: "capabilities", applies: .writable) { context in
            try context.expect(context.backend.capabilities.contains(.writable),
                               "a writable backend does not claim .writable, so the service would refuse every change")
        },

        Check(name: "announced write", applies: .writable) { context in
            let date = Date(timeIntervalSince1970: 1_200_000_000)
            let write = try await context.backend.makeWrite(at: context.path("announced.txt"),
                                                            announcing: ExpectedWrite(size: 9, modificationDate: date))
            do {
                try await write.write(Array("announced".utf8))
                try await write.setAttributes(permissions: nil, modificationDate: date)
                try await context.expectError([.noSuchFile], about: context.path("announced.txt"),
                                              "node(at:) of an announced write not yet committed") {
                    _ = try await context.backend.node(at: context.path("announced.txt"))
                }
                try await write.commit(conflict: .fail)
            } catch {
                await write.abort()
                throw error
            }
            try context.expect(try await context.contents("announced.txt") == Array("announced".utf8),
                               "an announced write reads back differently")
            let node = try await context.backend.node(at: context.path("announced.txt"))
            try context.expect(abs(node.modificationDate.timeIntervalSince(date)) < 0.001,
                               "an announced write's date reads back as \(node.modificationDate)")
            let refused = try await context.backend.makeWrite(at: context.path("hello.txt"),
                                                              announcing: ExpectedWrite(size: 1, modificationDate: nil))
            do {
                try await refused.write([1])
                try await context.expectError([.fileExists], about: context.path("hello.txt"), "an announced commit(.fail) over a file") {
                    try await refused.commit(conflict: .fail)
                }
            } catch {
                await refused.abort()
                throw error
            }
            await refused.abort()
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"),
                               "a refused announced write changed the file")
        },

        Check(name: "file attributes", applies: .writable) { context in
            let attributes: UserAttributes = ["user.coffer.conformance": [0, 1, 255], "user.xdg.comment": Array("注释".utf8)]
            let write = try await context.backend.makeWrite(at: context.path("attributed.txt"))
            let lost: Set<String>
            do {
                try await write.write([1])
                lost = Set(await write.setUserAttributes(attributes).map(\.name))
                try await write.commit(conflict: .fail)
            } catch {
                await write.abort()
                throw error
            }
            guard lost.count < attributes.count else { throw NotApplicable() }
            let file = try await context.backend.openFile(at: context.path("attributed.txt"))
            let read = await file.userAttributes()
            await file.close()
            for (name, value) in attributes where !lost.contains(name) {
                try context.expect(read[name] == value,
                                   "the attribute \(name) a write kept reads back as \(read[name].map { "\($0)" } ?? "missing")")
            }
        },

        Check(name: "descriptor reads", applies: .all) { context in
            let file = try await context.backend.openFile(at: context.path("big.bin"))
            guard let described = file as? any DescriptorReadableFile else {
                await file.close()
                throw NotApplicable()
            }
            let bytes: [UInt8]
            do {
                _ = try await file.read(upTo: 1_000)
                bytes = try await offThePool { () throws -> [UInt8] in
                    let descriptor = try described.openDescriptor()
                    defer { _ = Glibc.close(descriptor) }
                    return try readAll(descriptor)
                }
            } catch {
                await file.close()
                throw error
            }
            await file.close()
            try context.expect(bytes == context.file("big.bin"),
                               "a descriptor from openDescriptor() read \(bytes.count) bytes that differ from the file, or not from its start")
        },

        Check(name: "space report", applies: .all) { context in
            let reporting = try context.adopted((any SpaceReportingBackend).self)
            let space = try await reporting.space()
            try context.expect(space.usedBytes >= 0, "space() reports \(space.usedBytes) bytes used")
            if let total = space.totalBytes {
                try context.expect(total >= 0, "space() reports a total of \(total) bytes")
                try context.expect(space.usedBytes <= total, "space() reports \(space.usedBytes) bytes used of \(total)")
            }
            if let available = space.availableBytes {
                try context.expect(available >= 0, "space() reports \(available) bytes available")
                if let total = space.totalBytes {
                    try context.expect(available <= total, "space() reports \(available) bytes available of \(total)")
                }
            }
            // What is written is counted: a file of 4 KiB adds at least its bytes.
            guard context.backend.capabilities.contains(.writable) else { return }
            try await context.writeFile(at: context.path("counted.bin"), Array(repeating: 7, count: 4_096))
            let after = try await reporting.space()
            try context.expect(after.usedBytes >= space.usedBytes + 4_096,
                               "space() reports \(after.usedBytes) bytes used after a 4,096-byte file was written, \(space.usedBytes) before")
        },

        Check(name: "immediate metadata", applies: .all) { context in
            let immediate = try context.adopted((any ImmediateMetadata).self)
            for relative in [""] + fixture.map(\.path) {
                let path = context.path(relative)
                let awaited = try await context.backend.node(at: path)
                let now: FileNode
                do throws(CofferError) { now = try immediate.nodeImmediately(at: path) } catch {
                    throw Violation(message: "nodeImmediately(at: \(path)) threw \(error.kind); node(at:) succeeded")
                }
                try context.expect(now == awaited, "nodeImmediately(at: \(path)) differs from node(at:)")
            }
            let missing = context.path("Missing/nope.txt")
            do {
                _ = try immediate.nodeImmediately(at: missing)
                throw Violation(message: "nodeImmediately(at:) of a missing item succeeded; expected noSuchFile")
            } catch let error as CofferError {
                try context.expect(error.kind == .noSuchFile && error.path == missing,
                                   "nodeImmediately(at:) of a missing item threw \(error.kind) about \(error.path.map { "\($0)" } ?? "no path")")
            }
        },

        Check(name: "tree listing", applies: .all) { context in
            let listing = try context.adopted((any TreeListingBackend).self)
            for top in ["", "Folder"] {
                let tree = try await listing.contentsOfTree(at: context.path(top))
                var walked: [VirtualPath: [FileNode]] = [:]
                var pending = [context.path(top)]
                while let folder = pending.popLast() {
                    let nodes = try await context.backend.contentsOfFolder(at: folder)
                    walked[folder] = nodes
                    pending += nodes.filter { $0.kind != .file && $0.special == nil }.map(\.path)
                }
                try context.expect(Set(tree.keys) == Set(walked.keys),
                                   "contentsOfTree(at: “\(top)”) has the folders \(tree.keys.map { "\($0)" }.sorted()), a walk \(walked.keys.map { "\($0)" }.sorted())")
                for (folder, nodes) in walked {
                    // Sorted lists, not sets: an item listed twice is a difference too.
                    let described = { (nodes: [FileNode]) in
                        nodes.map { Array("\($0.path) \($0.kind) \($0.size)".utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
                    }
                    try context.expect(described(tree[folder] ?? []) == described(nodes),
                                       "contentsOfTree(at: “\(top)”) lists \(folder) as \((tree[folder] ?? []).map(\.name)), a walk as \(nodes.map(\.name))")
                }
            }
        },

        Check(name: "host paths", applies: .all) { context in
            let naming = try context.adopted((any HostPathNaming).self)
            let root = naming.hostPath(of: context.root)
            try context.expect(root.hasPrefix("/"), "hostPath(of:) of the root is “\(root)”, not an absolute path")
            for item in fixture {
                let path = context.path(item.path)
                let host = naming.hostPath(of: path)
                let folder = naming.hostPath(of: path.parent ?? context.root)
                try context.expect(host.utf8.elementsEqual((folder + "/" + path.name).utf8),
                                   "hostPath(of: \(path)) is “\(host)”, not its folder's host path, “/” and its name")
                var info = stat()
                try context.expect(lstat(host, &info) == 0, "hostPath(of: \(path)) names “\(host)”, which does not exist")
                let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
                try context.expect(isFolder == item.isFolder && (item.isFolder || Int(info.st_size) == item.contents!.count),
                                   "hostPath(of: \(path)) names “\(host)”, which is another item")
            }
        },

        Check(name: "local folders", applies: .all) { context in
            let local = try context.adopted((any LocalFolderBackend).self)
            for relative in ["hello.txt", "Folder/Sub/deep.txt", "cafe\u{301}.txt"] {
                let path = context.path(relative)
                let expected = context.file(relative).count
                let found = try await offThePool { () throws -> (name: String, size: Int?) in
                    try local.withParentFolder(of: path) { (folder, name) throws(CofferError) -> (name: String, size: Int?) in
                        var info = stat()
                        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                            return (name, nil)
                        }
                        return (name, Int(info.st_size))
                    }
                }
                try context.expect(found.name.utf8.elementsEqual(path.name.utf8),
                                   "withParentFolder(of: \(path)) gave the name “\(found.name)”")
                try context.expect(found.size == expected,
                                   "withParentFolder(of: \(path)) gave a folder in which “\(found.name)” is not the file")
            }
            for (relative, kind) in [("", CofferError.Kind.invalidOperation), ("Missing/nope.txt", .noSuchFile)] {
                let path = context.path(relative)
                let outcome = try await offThePool { () -> CofferError? in
                    do throws(CofferError) {
                        try local.withParentFolder(of: path) { _, _ throws(CofferError) in }
                        return nil
                    } catch {
                        return error
                    }
                }
                try context.expect(outcome?.kind == kind,
                                   "withParentFolder(of: \(path)) \(outcome.map { "threw \($0.kind)" } ?? "succeeded"); expected \(kind)")
            }
        },

        Check(name: "link resolving", applies: .all) { context in
            let resolving = try context.adopted((any LinkResolvingBackend).self)
            for relative in [""] + fixture.map(\.path) {
                let path = context.path(relative)
                let resolved = try await resolving.resolvingLinks(path)
                try context.expect(resolved == path, "resolvingLinks(\(path)), a path without links, gave \(resolved)")
            }
        },

        Check(name: "touch", applies: .writable) { context in
            let touching = try context.adopted((any TouchingBackend).self)
            let old = Date(timeIntervalSince1970: 1_000_000_000)
            try await context.writeFile(at: context.path("touched.txt"), Array("unchanged".utf8), modified: old)
            let before = Date()
            try await touching.touch(context.path("touched.txt"))
            let node = try await context.backend.node(at: context.path("touched.txt"))
            try context.expect(node.modificationDate >= before.addingTimeInterval(-2),
                               "touch left the modification date at \(node.modificationDate)")
            try context.expect(try await context.contents("touched.txt") == Array("unchanged".utf8), "touch changed the content")
            try await touching.touch(context.path("Folder"))
            let folder = try await context.backend.node(at: context.path("Folder"))
            try context.expect(folder.kind == .folder && folder.modificationDate >= before.addingTimeInterval(-2),
                               "touch of a folder left its date at \(folder.modificationDate)")
            try await context.expectError([.noSuchFile], about: context.path("nope.txt"), "touch of a missing item") {
                try await touching.touch(context.path("nope.txt"))
            }
        },

        Check(name: "tags", applies: .writable) { context in
            let tagging = try context.adopted((any TaggingBackend).self)
            let tags = ["red", "项目 A"]
            try await tagging.setTags(tags, at: context.path("hello.txt"))
            try context.expect(try await tagging.tags(at: context.path("hello.txt")) == tags, "tags set on a file read back differently")
            try context.expect(try await tagging.tags(at: context.path("big.bin")) == [], "an untagged file has tags")
            let batch = await tagging.tags(ofItems: ["big.bin", "hello.txt", "nope"], inFolderAt: context.root)
            try context.expect(batch == [[], tags, []], "tags(ofItems:inFolderAt:) gave \(batch)")
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"), "setting tags changed the content")
            try await tagging.setTags([], at: context.path("hello.txt"))
            try context.expect(try await tagging.tags(at: context.path("hello.txt")) == [], "setting no tags left some")
            try await context.expectError([.noSuchFile], about: context.path("nope.txt"), "tags(at:) of a missing item") {
                _ = try await tagging.tags(at: context.path("nope.txt"))
            }
        },

        Check(name: "item attributes", applies: .writable) { context in
            let keeping = try context.adopted((any AttributeKeepingBackend).self)
            let attributes: UserAttributes = ["user.coffer.conformance": [0, 1, 255], "user.xdg.comment": Array("注释".utf8)]
            var kept = 0
            for relative in ["Folder", "hello.txt"] {
                let path = context.path(relative)
                let lost = Set(try await keeping.setUserAttributes(attributes, at: path).map(\.name))
                let read = try await keeping.userAttributes(at: path)
                for (name, value) in attributes where !lost.contains(name) {
                    kept += 1
                    try context.expect(read[name] == value,
                                       "the attribute \(name) kept on \(relative) reads back as \(read[name].map { "\($0)" } ?? "missing")")
                }
            }
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"),
                               "setting attributes changed the content")
            try await context.expectError([.noSuchFile], about: context.path("nope.txt"), "userAttributes(at:) of a missing item") {
                _ = try await keeping.userAttributes(at: context.path("nope.txt"))
            }
            // Storage without extended attributes (some file systems) keeps none: nothing to check.
            if kept == 0 { throw NotApplicable() }
        },

        Check(name: "durable folders", applies: .writable) { context in
            let durable = try context.adopted((any DurableFolderBackend).self)
            try await context.backend.createFolder(at: context.path("Built"))
            try await BatchedDurability.$deferred.withValue(true) {
                for index in 0..<3 {
                    try await context.writeFile(at: context.path("Built/\(index).txt"), [UInt8(index)])
                }
            }
            try await durable.makeDurable(context.path("Built"))
            for index in 0..<3 {
                try context.expect(try await context.contents("Built/\(index).txt") == [UInt8(index)],
                                   "a file written with deferred durability reads back differently")
            }
        },

        Check(name: "watching", applies: .writable) { context in
            let watchable = try context.adopted((any WatchableBackend).self)
            let seen = ChangeLog()
            let watch = try await watchable.watch(context.root, recursive: true) { seen.add($0) }
            defer { watch.cancel() }
            let made = [context.path("watched.txt"), context.path("Folder/Sub/watched.txt")]
            for path in made {
                try await context.writeFile(at: path, [1])
            }
            // A watch reports within about 100 ms; ten seconds leave room for a loaded machine.
            let deadline = Date().addingTimeInterval(10)
            while !made.allSatisfy(seen.contains) && Date() < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            let missed = made.filter { !seen.contains($0) }
            try context.expect(missed.isEmpty, "a recursive watch of the root did not report \(missed.map { "\($0)" })")
            try await context.expectError([.noSuchFile], about: nil, "watching a missing item") {
                let gone = try await watchable.watch(context.path("Missing"), recursive: false) { _ in }
                gone.cancel()
            }
        },

        Check(name: "trash", applies: .writable) { context in
            let trash = try context.adopted((any TrashKeepingBackend).self)
            let results = await trash.trash([context.path("hello.txt"), context.path("Folder")])
            let items = try results.map { result in
                guard case .success(let item) = result else {
                    throw Violation(message: "trash(_:) failed: \(results)")
                }
                return item
            }
            try context.expect(items.map(\.originalPath) == [context.path("hello.txt"), context.path("Folder")],
                               "trashed items name their places as \(items.map { "\($0.originalPath)" })")
            try context.expect(Set(items.map(\.id)).count == 2, "two trashed items have the same id")
            for path in [context.path("hello.txt"), context.path("Folder")] {
                try await context.expectError([.noSuchFile], about: path, "node(at:) of a trashed item") {
                    _ = try await context.backend.node(at: path)
                }
            }
            let listed = try await trash.trashListing(mount: context.mount).items
            for item in items {
                try context.expect(listed.contains { $0.id == item.id && $0.originalPath == item.originalPath },
                                   "trashListing(mount:) lacks the trashed \(item.originalPath)")
                let again = try await trash.trashedItem(item.id, mount: context.mount)
                try context.expect(again.originalPath == item.originalPath, "trashedItem(_:mount:) names another item")
            }
            try await trash.restoreTrashed(items[0].id, to: context.path("hello.txt"))
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"), "a restored file reads differently")
            try await trash.restoreTrashed(items[1].id, to: context.path("Restored"))
            try context.expect(try await context.contents("Restored/Sub/deep.txt") == Array("deep".utf8),
                               "a restored folder lost what it held")
            let again = await trash.trash([context.path("big.bin")])
            guard case .success(let big) = again.first else { throw Violation(message: "trash(_:) failed: \(again)") }
            do {
                try await trash.restoreTrashed(big.id, to: context.path("hello.txt"))
                throw Violation(message: "restoreTrashed(_:to:) onto an existing file succeeded; expected fileExists")
            } catch let error as CofferError {
                try context.expect(error.kind == .fileExists, "restoreTrashed(_:to:) onto an existing file threw \(error.kind)")
            }
            try await trash.deleteTrashed(big.id)
            do {
                _ = try await trash.trashedItem(big.id, mount: context.mount)
                throw Violation(message: "trashedItem(_:mount:) of a deleted item succeeded; expected noSuchFile")
            } catch let error as CofferError {
                try context.expect(error.kind == .noSuchFile, "trashedItem(_:mount:) of a deleted item threw \(error.kind)")
            }
            _ = await trash.trash([context.path(".dotfile")])
            _ = try await trash.emptyTrash(mount: context.mount, olderThan: nil)
            let left = try await trash.trashListing(mount: context.mount).items
            try context.expect(left.isEmpty, "emptyTrash(mount:olderThan: nil) left \(left.map(\.id))")
        },

        Check(name: "trash copies", applies: .writable) { context in
            let trash = try context.adopted((any TrashCopyingBackend).self)
            let copy = try await trash.trashCopy(of: context.path("hello.txt"))
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"),
                               "trashCopy(of:) changed or removed the file")
            let listed = try await trash.trashListing(mount: context.mount).items
            try context.expect(listed.contains { $0.id == copy.id && $0.originalPath == context.path("hello.txt") },
                               "trashListing(mount:) lacks the copy trashCopy(of:) made")
            try await trash.discardTrashCopy(copy.id)
            let after = try await trash.trashListing(mount: context.mount).items
            try context.expect(!after.contains { $0.id == copy.id }, "discardTrashCopy(_:) left the copy in the trash")
            try context.expect(try await context.contents("hello.txt") == context.file("hello.txt"),
                               "discardTrashCopy(_:) changed the file")
        },

        Check(name: "kept versions", applies: .writable) { context in
            let versions = try context.adopted((any VersionKeepingBackend).self)
            let path = context.path("versioned.txt")
            let first = Array("first content".utf8), second = Array("second, longer content".utf8)
            try await context.writeFile(at: path, first)
            let discarded = try await versions.keepVersion(of: path)
            try await versions.discardKeptVersion(discarded)
            try context.expect(try await context.contents("versioned.txt") == first, "discardKeptVersion(_:) changed the file")
            let location = try await versions.keepVersion(of: path)
            let write = try await context.backend.makeWrite(at: path)
            try await write.write(second)
            try await write.commit(conflict: .replace)
            try context.expect(await versions.currentContents(among: [location]).isEmpty,
                               "currentContents(among:) says a replaced content is still the file's")
            let read = try await context.contents(of: versions.openVersion(location), named: "the version")
            try context.expect(read == first, "openVersion(_:) read \(read.count) bytes, not the content kept")
            try await versions.deleteVersion(location)
            try context.expect((try? await versions.openVersion(location)) == nil, "deleteVersion(_:) left the version readable")
            try context.expect(try await context.contents("versioned.txt") == second, "deleteVersion(_:) changed the file")
            try await context.backend.removeItem(at: path)
        },
    ]

    /// What a check throws when the backend does not adopt what it checks: the run reports
    /// the check in ``Report/notApplicable``, neither passed nor failed.
    struct NotApplicable: Error {}

    /// The changes a watch reported, gathered from whatever thread it reports on.
    final class ChangeLog: Sendable {
        private let paths = Mutex<Set<VirtualPath>>([])

        func add(_ changes: [FileChange]) {
            paths.withLock { $0.formUnion(changes.map(\.path)) }
        }

        func contains(_ path: VirtualPath) -> Bool {
            paths.withLock { $0.contains(path) }
        }
    }

    /// Runs `body` on a Dispatch thread: what the contract says blocking calls (a descriptor,
    /// `LocalFolderBackend.withParentFolder(of:_:)`) must never do on Swift's pool.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Everything a descriptor reads from where it stands.
    static func readAll(_ descriptor: Int32) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw CofferError(.ioError, detail: "reading a descriptor", errno: errno) }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }
}

extension BackendConformance.Context {
    /// Writes a new file at `path` (its date set to `modified`, when given) and commits it with
    /// `.fail`; a write that fails is aborted, so nothing of it is left.
    func writeFile(at path: VirtualPath, _ bytes: [UInt8], modified: Date? = nil) async throws {
        let write = try await backend.makeWrite(at: path)
        do {
            try await write.write(bytes)
            if let modified { try await write.setAttributes(permissions: nil, modificationDate: modified) }
            try await write.commit(conflict: .fail)
        } catch {
            await write.abort()
            throw error
        }
    }

    /// The backend as a `Capability`, or ``BackendConformance/NotApplicable`` when it does not
    /// adopt it.
    func adopted<Capability>(_: Capability.Type) throws -> Capability {
        guard let adopted = backend as? Capability else { throw BackendConformance.NotApplicable() }
        return adopted
    }
}
