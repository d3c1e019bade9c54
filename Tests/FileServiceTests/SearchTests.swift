import CofferBackends
import CofferCore
import CofferSearch
import CofferTestSupport
@_spi(Engine) @testable import FileService
import Foundation
import Synchronization
import Testing

/// Search on real folders: both engines against a brute-force walk, and the index kept
/// current by operations, by reopening, and by watching.
struct SearchTests {
    let directory = TemporaryDirectory("search")
    let container: Container
    let service: FileService

    init() async throws {
        container = try await Container.open(at: directory.url("c"))
        service = try FileService.standard(container: container)
    }

    var files: String { container.userFilesPath }

    func path(_ text: String) throws(CofferError) -> VirtualPath { try VirtualPath(parsing: text) }

    /// Runs a search and returns its engine and the matches' paths (and whether it was cut).
    func search(_ pattern: String, in scope: String = "/", types: [String] = [], limit: Int? = nil,
                engine: SearchEngine? = nil, detail: SearchDetail = .nodes, on service: FileService? = nil) async throws
        -> (engine: SearchEngine, paths: [String], truncated: Bool, unreadable: [String])
    {
        let query = SearchQuery(pattern: try NamePattern(pattern), scope: try path(scope), types: types, limit: limit,
                                engine: engine, detail: detail)
        let results = try await (service ?? self.service).search(query)
        var paths: [String] = [], unreadable: [String] = []
        var truncated = false
        for try await event in results.events {
            switch event {
            case .matches(let nodes):
                #expect(detail == .nodes)
                paths += nodes.map(\.path.description)
            case .paths(let found):
                #expect(detail == .paths)
                paths += found.map(\.description)
            case .unreadable(let path, _): unreadable.append(path.description)
            case .truncated: truncated = true
            }
        }
        return (results.engine, paths, truncated, unreadable)
    }

    /// The expected answer, computed without Coffer's search code: Foundation listing,
    /// `lstat`, Foundation folding and `contains`, and the documented rules (hidden items
    /// and package insides left out, links never followed, folders first, natural order).
    func bruteForce(_ pattern: String, in scope: String = "", types: [String] = []) -> [String] {
        let registry = TypeRegistry.standard
        func fold(_ text: String) -> String {
            text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
                .precomposedStringWithCanonicalMapping
        }
        let needle = fold(pattern)
        func visit(_ relative: String) -> [String] {
            let folder = files + (relative.isEmpty ? "" : "/" + relative)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            let hiddenList = (try? String(contentsOfFile: folder + "/.hidden", encoding: .utf8))
                .map { Set($0.split(separator: "\n").map(String.init)) } ?? []
            var items: [(name: String, isFolder: Bool, isPackage: Bool)] = []
            for name in names where !name.hasPrefix(".") && !hiddenList.contains(name) {
                var info = stat()
                lstat(folder + "/" + name, &info)
                let isFolder = info.st_mode & S_IFMT == S_IFDIR
                items.append((name, isFolder, isFolder && registry.isPackage(folderNamed: name)))
            }
            items.sort { a, b in a.isFolder != b.isFolder ? a.isFolder : a.name.naturallyPrecedes(b.name) }
            var found: [String] = []
            for item in items {
                let child = relative.isEmpty ? item.name : relative + "/" + item.name
                if fold(item.name).contains(needle) {
                    var info = stat()
                    lstat(files + "/" + child, &info)
                    let type = info.st_mode & S_IFMT == S_IFLNK ? FileType.Identifier.symbolicLink
                        : item.isFolder ? registry.typeIdentifier(forFolderNamed: item.name)
                        : registry.typeIdentifier(forFileNamed: item.name)
                    if types.isEmpty || types.contains(where: { registry.conforms(type, to: $0) }) {
                        found.append("files:/" + child)
                    }
                }
                if item.isFolder && !item.isPackage { found += visit(child) }
            }
            return found
        }
        return visit(scope)
    }

    /// A tree of `count` items from a fixed seed: spaces, Chinese, mixed case, NFD names,
    /// hidden items, a `.hidden` list, a package, and a link to a folder outside.
    func generateTree(count: Int, seed: UInt64) {
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        let words = ["Report", "report", "报告", "年度报告", "Résumé", "Re\u{301}sume\u{301}", "Q3 Budget", "photo",
                     "IMG", "notes", "A", "a b", "x", "Ärger", "draft 2", "草稿"]
        let extensions = ["", ".txt", ".jpg", ".png", ".pdf", ".md"]
        var folders = [""]
        for index in 0..<count {
            let parent = folders[next(folders.count)]
            let name = words[next(words.count)] + " \(index)"
            let relative = parent.isEmpty ? name : parent + "/" + name
            if next(4) == 0 {
                try! FileManager.default.createDirectory(atPath: files + "/" + relative, withIntermediateDirectories: true)
                folders.append(relative)
            } else {
                _ = FileManager.default.createFile(atPath: files + "/" + relative + extensions[next(extensions.count)],
                                               contents: Data())
            }
        }
        directory.make([
            "c/Documents/UserFiles/.cache report/report inside hidden.txt": "",
            "c/Documents/UserFiles/.report hidden.txt": "",
            "c/Documents/UserFiles/Listed/.hidden": "report listed.txt\n",
            "c/Documents/UserFiles/Listed/report listed.txt": "",
            "c/Documents/UserFiles/Listed/report shown.txt": "",
            "c/Documents/UserFiles/Report Album.app/report in package.txt": "",
            "outside/report outside.txt": "",
        ])
        directory.link("c/Documents/UserFiles/report link", to: directory.url("outside"))
    }

    @Test func bothEnginesEqualABruteForceWalk() async throws {
        generateTree(count: 400, seed: 42)
        #expect(await service.updateSearchIndex() != nil)
        let cases: [(String, String)] = [("report", ""), ("REPORT", ""), ("报告", ""), ("re", ""), ("a", ""),
                                         ("résumé", ""), ("resume", ""), ("q3 b", ""), ("x 1", ""), ("1", ""),
                                         ("zzz", ""), ("草稿", ""), ("ärger", ""), ("report.t", ""), ("ort q3", ""),
                                         ("e report", "")]
        for (pattern, scope) in cases {
            let expected = bruteForce(pattern, in: scope)
            for detail in [SearchDetail.nodes, .paths] {
                let walked = try await search(pattern, engine: .walk, detail: detail)
                let indexed = try await search(pattern, detail: detail)
                #expect(walked.engine == .walk && indexed.engine == .index)
                #expect(walked.paths == expected, "walk: \(pattern) \(detail)")
                #expect(indexed.paths == expected, "index: \(pattern) \(detail)")
            }
        }
        #expect(!bruteForce("report").isEmpty)
        #expect(!bruteForce("report").contains { $0.contains("outside") || $0.contains("package") || $0.contains("hidden") })
        // Within a folder, and by type.
        let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: files).first { name in
            var info = stat()
            lstat(files + "/" + name, &info)
            return info.st_mode & S_IFMT == S_IFDIR && !name.hasPrefix(".") && !name.hasSuffix(".app") && name != "Listed"
        })
        for engine in [SearchEngine.walk, nil] {
            #expect(try await search("e", in: "/" + folder, engine: engine).paths == bruteForce("e", in: folder))
            #expect(try await search("e", in: "/" + folder, engine: engine, detail: .paths).paths == bruteForce("e", in: folder))
            #expect(try await search("re", types: ["public.image"], engine: engine, detail: .paths).paths
                    == bruteForce("re", types: ["public.image"]))
            let images = try await search("re", types: ["public.image"], engine: engine)
            #expect(images.paths == bruteForce("re", types: ["public.image"]))
            #expect(!images.paths.isEmpty && images.paths.allSatisfy { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") })
        }
    }

    @Test func limitsAndSaysSo() async throws {
        generateTree(count: 120, seed: 7)
        let all = bruteForce("e")
        #expect(all.count > 10)
        #expect(await service.updateSearchIndex() != nil)
        for engine in [SearchEngine.walk, nil] {
            for detail in [SearchDetail.nodes, .paths] {
                let limited = try await search("e", limit: 10, engine: engine, detail: detail)
                #expect(limited.paths == Array(all.prefix(10)) && limited.truncated)
                let exact = try await search("e", limit: all.count, engine: engine, detail: detail)
                #expect(exact.paths == all && !exact.truncated)
            }
        }
    }

    /// A `.hidden` edited in place changes no folder's time, so a pass cannot see it: an
    /// index answering with paths alone reads the folders that hold one (in the item's own
    /// folder and above it), and hides and shows what they say at once.
    @Test func aHiddenListEditedInPlaceIsHonouredByAPathsOnlyAnswer() async throws {
        directory.make([
            "c/Documents/UserFiles/Listed/report a.txt": "", "c/Documents/UserFiles/Listed/report b.txt": "",
            "c/Documents/UserFiles/Listed/Deeper/report c.txt": "", "c/Documents/UserFiles/Listed/.hidden": "\n",
            "c/Documents/UserFiles/Plain/report d.txt": "",
        ])
        try ageFolders()
        #expect(await service.updateSearchIndex() != nil)
        func found() async throws -> [String] { try await search("report", detail: .paths).paths }
        #expect(try await found() == ["files:/Listed/Deeper/report c.txt", "files:/Listed/report a.txt",
                                      "files:/Listed/report b.txt", "files:/Plain/report d.txt"])
        let list = try #require(FileHandle(forWritingAtPath: files + "/Listed/.hidden"))
        try list.seekToEnd()
        list.write(Data("report b.txt\nDeeper\n".utf8))
        try list.close()
        #expect(try await found() == ["files:/Listed/report a.txt", "files:/Plain/report d.txt"])
        #expect(try await found() == bruteForce("report"))
        #expect(try await search("report").paths == bruteForce("report"))
        // And shown again.
        let emptied = try #require(FileHandle(forWritingAtPath: files + "/Listed/.hidden"))
        try emptied.truncate(atOffset: 0)
        try emptied.close()
        #expect(try await found().count == 4)
    }

    @Test func refusesBadQueries() async throws {
        await #expect(throws: CofferError.self) { try await search("a", types: ["public.nonsense"]) }
        _ = FileManager.default.createFile(atPath: files + "/plain.txt", contents: Data())
        let error = await #expect(throws: CofferError.self) { try await search("a", in: "/plain.txt") }
        #expect(error?.kind == .notADirectory)
        #expect(throws: CofferError.self) { try NamePattern("") }
    }

    /// Every operation tells the index before it returns: the rows are read here without
    /// any comparison with the disk.
    @Test func everyOperationUpdatesTheIndex() async throws {
        let index = try #require(service.searchIndex)
        #expect(await service.updateSearchIndex() != nil)
        func indexed(_ pattern: String) async throws -> [String] {
            try #require(await index.query(try NamePattern(pattern), below: .root())).map(\.description)
        }
        try await service.createFolder(at: try path("/Reports 2026"))
        #expect(try await indexed("reports") == ["files:/Reports 2026"])
        try await service.createFolder(at: try path("/Deep/Er/Reports Q"), intermediates: true)
        #expect(try await indexed("er") == ["files:/Deep/Er"])
        #expect(try await indexed("reports q") == ["files:/Deep/Er/Reports Q"])
        try await service.writeFile(try path("/Reports 2026/Q3 report.txt"), bytes: Array("q3".utf8), conflict: .fail)
        #expect(try await indexed("q3 rep") == ["files:/Reports 2026/Q3 report.txt"])
        try await service.rename(try path("/Reports 2026/Q3 report.txt"), to: "Q4 report.txt", conflict: .fail)
        #expect(try await indexed("report.txt") == ["files:/Reports 2026/Q4 report.txt"])
        try await service.move(try path("/Reports 2026"), to: try path("/Deep/Reports 2026"), conflict: .fail)
        #expect(try await indexed("q4") == ["files:/Deep/Reports 2026/Q4 report.txt"])
        try await service.copy(try path("/Deep/Reports 2026"), to: try path("/Copied"), conflict: .fail)
        #expect(try await indexed("q4") == ["files:/Copied/Q4 report.txt", "files:/Deep/Reports 2026/Q4 report.txt"])
        let trashed = try await service.trash(try path("/Copied"))
        #expect(try await indexed("q4") == ["files:/Deep/Reports 2026/Q4 report.txt"])
        try await service.restore(trashed.id, conflict: .fail)
        #expect(try await indexed("copied") == ["files:/Copied"])
        #expect(try await indexed("q4").count == 2)
        directory.make(["host/Imported report.md": "x"])
        let session = try service.openSession(SessionOptions(frontEnd: "test", hostAccess: .anywhere))
        _ = try await session.perform(ImportItems([directory.url("host/Imported report.md")]))
        #expect(try await indexed("imported") == ["files:/Import/Imported report.md"])
        let upload = try await session.perform(BeginUpload(try path("/Uploaded report.bin")))
        _ = try await session.perform(AppendUpload(upload, offset: 0, bytes: [1, 2, 3]))
        #expect(try await indexed("uploaded").isEmpty)
        _ = try await session.perform(CommitUpload(upload))
        #expect(try await indexed("uploaded") == ["files:/Uploaded report.bin"])
        _ = await service.trash([try path("/Deep"), try path("/Import")])
        #expect(try await indexed("report") == ["files:/Copied/Q4 report.txt", "files:/Uploaded report.bin"])
        // Nothing a pass would have to repair: the rows already match the disk.
        #expect(try await indexed("e") == bruteForce("e"))
    }

    /// Folders keep their old times so the index trusts them; then other programs change
    /// some, and a reopened index rereads only those.
    @Test func outsideChangesArePickedUpOnReopen() async throws {
        generateTree(count: 200, seed: 3)
        directory.make(["c/Documents/UserFiles/Stable/keep report.txt": "", "c/Documents/UserFiles/Changing/old report.txt": ""])
        try ageFolders()
        #expect(await service.updateSearchIndex() != nil)
        let before = try #require(service.searchIndex).statistics.foldersScanned

        // Another program at work while Coffer is closed.
        try FileManager.default.removeItem(atPath: files + "/Changing/old report.txt")
        directory.make(["c/Documents/UserFiles/Changing/new report.txt": "",
                        "c/Documents/UserFiles/Changing/Fresh/fresh report.txt": ""])
        try FileManager.default.moveItem(atPath: files + "/Stable/keep report.txt", toPath: files + "/moved report.txt")

        let reopened = try FileService.standard(container: container)
        let result = try await search("report", on: reopened)
        #expect(result.engine == .index)
        #expect(result.paths == bruteForce("report"))
        #expect(result.paths.contains("files:/Changing/Fresh/fresh report.txt"))
        #expect(!result.paths.contains("files:/Changing/old report.txt"))
        // The root, Changing, Changing/Fresh and Stable changed; nothing else was read again.
        let scanned = try #require(reopened.searchIndex).statistics.foldersScanned
        #expect(scanned == 4, "rescanned \(scanned) folders (the first build read \(before))")
    }

    @Test func changesByOthersReachTheIndexWhileWatching() async throws {
        generateTree(count: 50, seed: 11)
        let index = try #require(service.searchIndex)
        await service.startIndexing(watching: true)
        defer { service.stopIndexing() }
        await index.waitForPass()
        #expect(index.isComplete && index.isLive)
        directory.make(["c/Documents/UserFiles/Zebra/zebra notes.txt": ""])
        #expect(await eventually { try await index.query(NamePattern("zebra"), below: .root())?.count == 2 })
        try FileManager.default.moveItem(atPath: files + "/Zebra", toPath: files + "/Okapi")
        #expect(await eventually {
            try await index.query(NamePattern("zebra"), below: .root())?.map(\.description) == ["files:/Okapi/zebra notes.txt"]
        })
        try FileManager.default.removeItem(atPath: files + "/Okapi")
        #expect(await eventually { try await index.query(NamePattern("zebra"), below: .root())?.isEmpty == true })
        #expect(try await search("e").paths == bruteForce("e"))
        // A hidden list written in place hides its neighbours (and shows them again).
        directory.make(["c/Documents/UserFiles/Herd/zebra one.txt": "", "c/Documents/UserFiles/Herd/zebra two.txt": "",
                        "c/Documents/UserFiles/Herd/.hidden": "\n"])
        #expect(await eventually { try await index.query(NamePattern("zebra"), below: .root())?.count == 2 })
        let list = try #require(FileHandle(forWritingAtPath: files + "/Herd/.hidden"))
        try list.seekToEnd()
        list.write(Data("zebra two.txt\n".utf8))
        try list.close()
        #expect(await eventually {
            try await index.query(NamePattern("zebra"), below: .root())?.map(\.description)
                == ["files:/Herd/zebra one.txt"]
        })
        try Data().write(to: URL(fileURLWithPath: files + "/Herd/.hidden"))
        #expect(await eventually { try await index.query(NamePattern("zebra"), below: .root())?.count == 2 })
    }

    /// The rows carry sizes, times and tags (issue 35): a live index answers the filters from
    /// them, as current as its watch (a file grown in place, tags another program set), and
    /// gives what reading every match would.
    @Test func aLiveIndexAnswersFiltersFromItsRowsKeptCurrentByTheWatch() async throws {
        generateTree(count: 60, seed: 23)
        directory.make(["c/Documents/UserFiles/Facts/small.txt": "x", "c/Documents/UserFiles/Facts/old.txt": "old"])
        let old = Date(timeIntervalSinceNow: -40 * 86400)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: files + "/Facts/old.txt")
        let index = try #require(service.searchIndex)
        await service.startIndexing(watching: true)
        defer { service.stopIndexing() }
        await index.waitForPass()
        await index.waitForFacts()
        #expect(index.factsAreCurrent, "every folder was read again under the watch")
        let everything = try NamePattern("*")
        func filtered(_ filters: SearchFilters) async -> [String]? {
            await index.query(everything, below: .root(), filters: filters)?.map(\.description)
        }
        func read(_ filters: SearchFilters) async throws -> [String] {
            let query = SearchQuery(pattern: try NamePattern("*"), scope: .root(), engine: .walk, filters: filters)
            var paths: [String] = []
            for try await case .matches(let nodes) in try await service.search(query).events { paths += nodes.map(\.path.description) }
            return paths
        }
        let older = SearchFilters(modifiedBefore: Date(timeIntervalSinceNow: -30 * 86400))
        #expect(await filtered(older) == ["files:/Facts/old.txt"])
        let walkedOlder = try await read(older)
        #expect(await filtered(older) == walkedOlder)
        let large = SearchFilters(minimumSize: 1000)
        #expect(await filtered(large) == [])

        // Another program grows a file in place (its folder's time does not change) and tags one.
        let handle = try #require(FileHandle(forWritingAtPath: files + "/Facts/small.txt"))
        try handle.seekToEnd()
        handle.write(Data(repeating: 65, count: 5000))
        try handle.close()
        #expect(Self.setTags("work,urgent", on: files + "/Facts/old.txt"))
        #expect(await eventually { await filtered(large) == ["files:/Facts/small.txt"] })
        let tagged = SearchFilters(tags: ["urgent"])
        #expect(await eventually { await filtered(tagged) == ["files:/Facts/old.txt"] })
        let walkedTagged = try await read(tagged)
        #expect(await filtered(tagged) == walkedTagged)
        #expect(await filtered(SearchFilters(tags: ["urgent", "missing"])) == [])

        // A search through the service takes the rows' answer, and it is the walk's.
        let both = SearchFilters(modifiedBefore: Date(timeIntervalSinceNow: -30 * 86400), tags: ["work"])
        let query = SearchQuery(pattern: try NamePattern("*"), scope: .root(), filters: both)
        let results = try await service.search(query)
        var found: [String] = []
        for try await case .matches(let nodes) in results.events { found += nodes.map(\.path.description) }
        let walkedBoth = try await read(both)
        #expect(results.engine == .index && found == walkedBoth && found == ["files:/Facts/old.txt"])
    }

    /// `setfattr` (`attr`), as another program tags a file.
    static func setTags(_ value: String, on path: String) -> Bool {
        (try? TestProcess.run(["setfattr", "-n", "user.xdg.tags", "-v", value, path], timeout: 60))?.status == 0
    }

    @Test func aDeletedIndexIsRebuiltByTheNextSearch() async throws {
        generateTree(count: 100, seed: 5)
        #expect(await service.updateSearchIndex() != nil)
        for suffix in ["", "-wal", "-shm"] { unlink(container.searchIndexDatabasePath + suffix) }
        // A process without a watch (a one-off command) finishes the build and answers from it.
        let reopened = try FileService.standard(container: container)
        let first = try await search("re", on: reopened)
        #expect(first.engine == .index && first.paths == bruteForce("re"))
        #expect(reopened.searchIndex?.isComplete == true)
    }

    @Test func aLiveSessionWalksWhileItsIndexIsBuilt() async throws {
        generateTree(count: 100, seed: 6)
        let index = try #require(service.searchIndex)
        index.limitBatches(to: 0)
        let session = try service.openSession(SessionOptions(frontEnd: "test", isLongLived: true))
        let first = try await search("re")
        #expect(first.engine == .walk && first.paths == bruteForce("re"))
        index.limitBatches(to: nil)
        await index.reconcile()
        #expect(try await search("re").engine == .index)
        await session.close()
    }

    @Test func aBuildCutShortTwiceResumesToWhatABuildFromNothingGives() async throws {
        generateTree(count: 1500, seed: 17)
        let index = try #require(service.searchIndex)
        index.limitBatches(to: 2)
        await index.reconcile()
        #expect(!index.isComplete)
        let afterFirst = index.statistics.foldersScanned
        #expect(afterFirst > 0)
        // Other programs change the tree between the builds.
        directory.make(["c/Documents/UserFiles/report added 1.txt": "", "c/Documents/UserFiles/New report folder/inner report.md": ""])
        let top = try FileManager.default.contentsOfDirectory(atPath: files).filter { !$0.hasPrefix(".") }.sorted()
        try FileManager.default.moveItem(atPath: files + "/" + top[0], toPath: files + "/renamed report " + top[0])
        try FileManager.default.removeItem(atPath: files + "/" + top[1])
        index.limitBatches(to: 3)
        await index.reconcile()
        #expect(!index.isComplete)
        #expect(index.statistics.foldersScanned > afterFirst)
        directory.make(["c/Documents/UserFiles/report added 2.txt": ""])
        try FileManager.default.removeItem(atPath: files + "/" + top[2])
        index.limitBatches(to: nil)
        // The next one-off search finishes the build from where the last one stopped.
        let resumed = try await search("report")
        #expect(resumed.engine == .index && index.isComplete)
        // The same answers as the disk, and as a build from nothing.
        for pattern in ["report", "re", "e", "报告", "resume", "a b", "2"] {
            let fromIndex = try #require(await index.query(try NamePattern(pattern), below: .root())).map(\.description)
            #expect(fromIndex == bruteForce(pattern), "\(pattern)")
        }
        for suffix in ["", "-wal", "-shm"] { unlink(container.searchIndexDatabasePath + suffix) }
        let rebuilt = try FileService.standard(container: container)
        for pattern in ["report", "re", "e", "报告", "resume", "a b", "2"] {
            let resumedPaths = try #require(await index.query(try NamePattern(pattern), below: .root())).map(\.description)
            let fromNothing = try await search(pattern, on: rebuilt)
            #expect(fromNothing.engine == .index && fromNothing.paths == resumedPaths, "\(pattern)")
        }
    }

    @Test(arguments: [0, 40_960])
    func aCorruptIndexIsRebuilt(at offset: Int) async throws {
        generateTree(count: 300, seed: 9)
        #expect(await service.updateSearchIndex() != nil)
        // Closed, so everything is in the database file rather than its write-ahead log.
        service.searchIndex?.close()
        let file = container.searchIndexDatabasePath
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        try handle.seek(toOffset: UInt64(offset))
        handle.write(Data(repeating: 0xA5, count: 32_768))
        try handle.close()
        let reopened = try FileService.standard(container: container)
        let first = try await search("re", on: reopened)
        #expect(first.paths == bruteForce("re"))
        await reopened.searchIndex?.waitForPass()
        let second = try await search("re", on: reopened)
        #expect(second.engine == .index && second.paths == bruteForce("re"))
        let statistics = try #require(reopened.searchIndex).statistics
        #expect(statistics.rebuilds == 1, "\(statistics)")
    }

    @Test func theWalkNeverFollowsLinksAndStaysInsideThePackageRule() async throws {
        generateTree(count: 10, seed: 1)
        let walked = try await search("report", engine: .walk)
        #expect(walked.paths.contains("files:/report link"))
        #expect(!walked.paths.contains { $0.contains("outside") || $0.contains("in package") })
        #expect(walked.paths.contains("files:/Report Album.app"))
    }

    @Test func watchesReportChangesMadeByAnotherProcess() async throws {
        directory.make(["c/Documents/UserFiles/W/old.txt": "o", "c/Documents/UserFiles/W/gone.txt": "g"])
        let received = Mutex<[String]>([])
        let watch = try await service.watch(try path("/W")) { changes in
            received.withLock { $0 += changes.map { "\($0.kind.rawValue) \($0.path)" } }
        }
        defer { watch.cancel() }
        _ = try TestProcess.run(["/bin/sh", "-c", "mkdir Sub && echo n > Sub/new.txt && echo more >> old.txt && rm gone.txt && mv old.txt renamed.txt"],
                                workingDirectory: files + "/W", timeout: 60)
        let expected = ["created files:/W/Sub", "deleted files:/W/gone.txt", "deleted files:/W/old.txt",
                        "created files:/W/renamed.txt"]
        #expect(await eventually { Set(received.withLock { $0 }).isSuperset(of: expected) })
        // The file written inside the new folder is reported too (its watch was added at once)
        // or folded into the folder's creation; a change to a file that moved is never lost.
        let events = received.withLock { $0 }
        #expect(!events.contains { $0.hasPrefix("changed files:/W/old.txt") && !events.contains("deleted files:/W/old.txt") })
        watch.cancel()
        let count = events.count
        _ = FileManager.default.createFile(atPath: files + "/W/after.txt", contents: Data())
        try await Task.sleep(for: .milliseconds(300))
        #expect(received.withLock { $0.count } == count)
    }

    /// Sets every folder's modification time an hour back, as if the tree were old.
    func ageFolders() throws {
        let old = Date().addingTimeInterval(-3600)
        let enumerator = FileManager.default.enumerator(atPath: files)!
        var folders = [files]
        while let relative = enumerator.nextObject() as? String {
            var info = stat()
            lstat(files + "/" + relative, &info)
            if info.st_mode & S_IFMT == S_IFDIR { folders.append(files + "/" + relative) }
        }
        for folder in folders {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: folder)
        }
    }
}

/// Polls `condition` for up to three seconds.
func eventually(_ condition: () async throws -> Bool) async -> Bool {
    for _ in 0..<60 {
        if (try? await condition()) == true { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return false
}
