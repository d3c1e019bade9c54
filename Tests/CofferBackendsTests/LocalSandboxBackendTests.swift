import CofferBackends
import CofferCore
import CofferTestSupport
import Foundation
import Synchronization
import Testing

struct LocalSandboxBackendTests {
    let directory = TemporaryDirectory("local")
    let backend: LocalSandboxBackend

    init() throws {
        directory.make(["a.txt": "hello", ".dot": "", "shown.md": "#", "secret-by-list": "x",
                        ".hidden": "secret-by-list\nmissing\n", "Photos.app/Contents/x": "", "Docs/": "",
                        "Docs/inner.pdf": "%PDF"])
        backend = try LocalSandboxBackend(rootPath: directory.path, syncBeforeCommit: false)
    }

    func path(_ text: String) throws -> VirtualPath { try VirtualPath(parsing: text) }

    @Test func listsKindsTypesAndHiddenFlags() async throws {
        let nodes = try await backend.contentsOfFolder(at: .root())
        let byName = Dictionary(uniqueKeysWithValues: nodes.map { ($0.name, $0) })
        #expect(Set(byName.keys) == ["a.txt", ".dot", "shown.md", "secret-by-list", ".hidden", "Photos.app", "Docs"])
        #expect(byName["a.txt"]?.kind == .file)
        #expect(byName["a.txt"]?.size == 5)
        #expect(byName["a.txt"]?.typeIdentifier == "public.plain-text")
        #expect(byName["shown.md"]?.typeIdentifier == "net.daringfireball.markdown")
        #expect(byName["Photos.app"]?.kind == .package)
        #expect(byName["Docs"]?.kind == .folder)
        #expect(byName[".dot"]?.isHidden == true)
        #expect(byName["secret-by-list"]?.isHidden == true)
        #expect(byName["shown.md"]?.isHidden == false)
        #expect(byName["a.txt"]?.path.description == "files:/a.txt")
    }

    @Test func readsFiles() async throws {
        let file = try await backend.openFile(at: try path("/a.txt"))
        #expect(file.size == 5)
        #expect(try await file.read(upTo: 3) == Array("hel".utf8))
        #expect(try await file.read(upTo: 100) == Array("lo".utf8))
        #expect(try await file.read(upTo: 100).isEmpty)
        await file.close()
        await #expect(throws: CofferError.self) { _ = try await backend.openFile(at: try path("/Docs")) }
    }

    @Test func writesAreInvisibleUntilCommitted() async throws {
        let write = try await backend.makeWrite(at: try path("/new.txt"))
        try await write.write(Array("partial".utf8))
        #expect(!directory.exists("new.txt"))
        #expect(try await backend.contentsOfFolder(at: .root()).allSatisfy { !$0.name.hasPrefix(".coffer") })
        try await write.commit(conflict: .fail)
        #expect(directory.contents("new.txt") == "partial")
        #expect(directory.names().allSatisfy { !$0.hasPrefix(".coffer-partial") })
    }

    @Test func abortLeavesNothing() async throws {
        let write = try await backend.makeWrite(at: try path("/gone.txt"))
        try await write.write(Array("x".utf8))
        await write.abort()
        #expect(!directory.exists("gone.txt"))
        #expect(directory.names().allSatisfy { !$0.hasPrefix(".coffer-partial") })
    }

    @Test func commitNeverOverwritesUnlessAsked() async throws {
        let write = try await backend.makeWrite(at: try path("/a.txt"))
        try await write.write(Array("new".utf8))
        do {
            try await write.commit(conflict: .fail)
            Issue.record("overwrote")
        } catch let error as CofferError {
            #expect(error.kind == .fileExists)
        }
        #expect(directory.contents("a.txt") == "hello")
        #expect(directory.names().allSatisfy { !$0.hasPrefix(".coffer-partial") })
        let replace = try await backend.makeWrite(at: try path("/a.txt"))
        try await replace.write(Array("new".utf8))
        try await replace.commit(conflict: .replace)
        #expect(directory.contents("a.txt") == "new")
    }

    @Test func backupExclusionIsKeptWhenAFileIsReplaced() async throws {
        try await backend.setExcludedFromBackup(true, at: try path("/a.txt"))
        #expect(try await backend.node(at: try path("/a.txt")).isExcludedFromBackup)
        let replace = try await backend.makeWrite(at: try path("/a.txt"))
        try await replace.write(Array("v2".utf8))
        try await replace.commit(conflict: .replace)
        #expect(directory.contents("a.txt") == "v2")
        #expect(try await backend.node(at: try path("/a.txt")).isExcludedFromBackup)
        // Checked with another reader too (Python's os.getxattr).
        #expect(try runPython("import os,sys; print(os.getxattr(sys.argv[1], 'user.xdg.robots.backup').decode())",
                              directory.url("a.txt")) == "false")
        try await backend.setExcludedFromBackup(false, at: try path("/a.txt"))
        #expect(try await !backend.node(at: try path("/a.txt")).isExcludedFromBackup)
    }

    @Test func movesAndReplacesFoldersAtomically() async throws {
        directory.make(["Target/old.txt": "old"])
        await #expect(throws: CofferError.self) {
            try await backend.moveItem(at: try path("/Docs"), to: try path("/Target"), conflict: .fail)
        }
        #expect(directory.exists("Docs/inner.pdf"))
        try await backend.moveItem(at: try path("/Docs"), to: try path("/Target"), conflict: .replace)
        #expect(!directory.exists("Docs"))
        #expect(directory.names("Target") == ["inner.pdf"])
    }

    @Test func copiesFilesAndFoldersWithProgress() async throws {
        let updates = Mutex<[OperationProgress]>([])
        let reporter = ProgressReporter { progress in updates.withLock { $0.append(progress) } }
        try await backend.copyItem(at: try path("/Docs"), to: try path("/Docs copy"), conflict: .fail, progress: reporter)
        #expect(directory.contents("Docs copy/inner.pdf") == "%PDF")
        #expect(directory.contents("Docs/inner.pdf") == "%PDF")
        let last = try #require(updates.withLock { $0.last })
        #expect(last.completedBytes == 4 && last.totalBytes == 4)
        #expect(last.completedItems == last.totalItems)
    }

    @Test func aCancelledCopyLeavesNoPartialFile() async throws {
        let big = directory.url("big.bin")
        let chunk = Data(repeating: 7, count: 1 << 20)
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        for _ in 0..<256 { handle.write(chunk) }
        try handle.close()

        let task = Mutex<Task<Void, any Error>?>(nil)
        let reporter = ProgressReporter { progress in
            if progress.completedBytes > 0 { task.withLock { $0?.cancel() } }
        }
        let backend = self.backend
        let copy = Task {
            try await backend.copyItem(at: try VirtualPath(parsing: "/big.bin"), to: try VirtualPath(parsing: "/big copy.bin"),
                                       conflict: .fail, progress: reporter)
        }
        task.withLock { $0 = copy }
        copy.cancel()  // also cancel up front in case the copy finishes its first chunk first
        do {
            try await copy.value
            Issue.record("copy was not cancelled")
        } catch let error as CofferError {
            #expect(error.kind == .cancelled)
        }
        #expect(!directory.exists("big copy.bin"))
        #expect(directory.names().allSatisfy { !$0.hasPrefix(".coffer-partial") })
        #expect(try FileManager.default.attributesOfItem(atPath: big)[.size] as? Int == 256 << 20)
    }

    @Test func readOnlyBackendRefusesChanges() async throws {
        let readOnly = try LocalSandboxBackend(rootPath: directory.path, writable: false)
        await #expect(throws: CofferError.self) { try await readOnly.createFolder(at: try path("/x")) }
        #expect(!directory.exists("x"))
        #expect(try await readOnly.contentsOfFolder(at: .root()).count == 7)
    }

    @Test func errorsNameVirtualPathsNotHostPaths() async throws {
        do {
            _ = try await backend.node(at: try path("/missing/file.txt"))
            Issue.record("no error")
        } catch let error as CofferError {
            #expect(error.kind == .noSuchFile)
            for language in Language.allCases {
                #expect(!error.userMessage(in: language).description.contains(directory.path))
            }
        }
    }
}

/// Runs a Python snippet with arguments and returns its trimmed standard output.
func runPython(_ code: String, _ arguments: String...) throws -> String {
    try TestProcess.run(["python3", "-c", code] + arguments, timeout: 60).outputText
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
