import CofferTestSupport
import Foundation
import Testing

/// Runs the built `coffer` binary and checks what it prints and what is on disk.
@Suite(.serialized, .ownsProcesses)
struct CommandEndToEndTests {
    let directory = TemporaryDirectory("e2e")
    var container: String { directory.url("container") }
    var files: String { directory.url("container/Documents/UserFiles") }

    func coffer(_ commands: String, language: String = "en") throws -> CofferBinary.Result {
        try CofferBinary.run(["--container", container, "--lang", language, "-c", commands])
    }

    @Test func firstRunCreatesTheContainerAndListsIt() throws {
        let result = try coffer("ls")
        #expect(result.status == 0)
        #expect(result.output == "Download\nImport\n")
        #expect(result.errors.isEmpty)
        #expect(directory.exists("container/Library/Caches/SearchIndex/CACHEDIR.TAG"))
        #expect(directory.exists("container/Library/Application Support/AppData"))
    }

    @Test func commandsChangeTheDisk() throws {
        _ = try coffer("ls")
        directory.make(["container/Documents/UserFiles/notes.txt": "hello"])
        let result = try coffer("""
            mkdir -p "Projects/报告 2026"; cp notes.txt 'Projects/报告 2026'; cd Projects; \
            mv '报告 2026/notes.txt' '报告 2026/final.txt'; rename '报告 2026' Reports; cp -r Reports Reports2; pwd
            """)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "files:/Projects\n")
        #expect(directory.contents("container/Documents/UserFiles/Projects/Reports/final.txt") == "hello")
        #expect(directory.contents("container/Documents/UserFiles/Projects/Reports2/final.txt") == "hello")
        #expect(directory.contents("container/Documents/UserFiles/notes.txt") == "hello")
        #expect(!directory.exists("container/Documents/UserFiles/Projects/报告 2026"))
    }

    @Test func exitStatusIsZeroOnlyWhenEveryCommandSucceeded() throws {
        let result = try coffer("mkdir A; mkdir A; mkdir B")
        #expect(result.status == 1)
        #expect(result.errors == "coffer: An item named “files:/A” already exists. Choose another name, or ask to keep both or replace (a replaced file is kept as a version, a folder goes to the trash).\n")
        #expect(directory.exists("container/Documents/UserFiles/B"))
    }

    @Test func conflictsFailUnlessAFlagChose() throws {
        _ = try coffer("ls")
        directory.make(["container/Documents/UserFiles/a.pdf": "new", "container/Documents/UserFiles/Download/a.pdf": "old"])
        #expect(try coffer("cp a.pdf Download").status == 1)
        #expect(directory.contents("container/Documents/UserFiles/Download/a.pdf") == "old")
        #expect(try coffer("cp --keep-both a.pdf Download; cp --keep-both a.pdf Download").status == 0)
        #expect(directory.names("container/Documents/UserFiles/Download") == ["a (2).pdf", "a (3).pdf", "a.pdf"])
        #expect(try coffer("mv --replace a.pdf Download").status == 0)
        #expect(directory.contents("container/Documents/UserFiles/Download/a.pdf") == "new")
        #expect(!directory.exists("container/Documents/UserFiles/a.pdf"))
    }

    @Test func pipedCommandsPrintNoPromptAndNoEcho() throws {
        let result = try CofferBinary.run(["--container", container], input: "mkdir 'Piped Folder'\nls\nnosuch\npwd\n")
        #expect(result.output == "Download\nImport\nPiped Folder\nfiles:/\n")
        #expect(result.status == 1)
        #expect(result.errors.contains("unknown command “nosuch”"))
    }

    @Test func sigintCancelsAPipedCopyAndExits130() async throws {
        _ = try coffer("ls")
        let big = directory.url("container/Documents/UserFiles/big.bin")
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, 6 << 30) == 0)  // sparse: large to copy, cheap to make

        let process = try TestProcess([CofferBinary.url.path, "--container", container],
                                      environment: CofferBinary.environment([:]), output: .discarded)
        // The copy runs while standard input stays open; then Ctrl-C arrives.
        process.write(Data("cp big.bin copy.bin\npwd\n".utf8))
        // Once the copy has the file open (not after a fixed pause, which a busy machine can
        // outlast before the program has even started).
        let descriptors = "/proc/\(process.pid)/fd"
        let copying = await eventually {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
            return names.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + $0))?.hasSuffix("/UserFiles/big.bin") == true }
        }
        #expect(copying, "the copy never opened big.bin")
        process.signal(SIGINT)
        #expect(try await offPool { try process.waitForExit() } == 130)
        let names = try FileManager.default.contentsOfDirectory(atPath: files).sorted()
        #expect(names == ["Download", "Import", "big.bin"])
    }

    @Test func rmTrashRestoreAndEmptyFromAScript() throws {
        _ = try coffer("ls")
        directory.make(["container/Documents/UserFiles/a.txt": "a", "container/Documents/UserFiles/b 报告.txt": "b"])
        let removed = try coffer("rm a.txt missing.txt 'b 报告.txt'")
        #expect(removed.status == 1)
        #expect(removed.errors == "coffer: “files:/missing.txt” doesn't exist. It may have been moved or deleted; "
                + "check the name and list the folder again.\n")
        #expect(directory.names("container/Library/Trash/files").sorted() == ["a.txt", "b 报告.txt"])
        let restored = try coffer("restore 'b 报告.txt'; ls")
        #expect(restored.output == "files:/b 报告.txt\nDownload\nImport\nb 报告.txt\n")
        // Not on a terminal, no one can be asked: empty-trash deletes only with --yes (issue 48).
        let refused = try CofferBinary.run(["--container", container, "--lang", "en"], input: "empty-trash\n")
        #expect(refused.status != 0 && refused.errors.contains("needs --yes"), "\(refused.errors)")
        #expect(directory.names("container/Library/Trash/files") == ["a.txt"])
        let emptied = try CofferBinary.run(["--container", container, "--lang", "en"], input: "empty-trash --yes\ntrash\n")
        #expect(emptied.status == 0)
        #expect(emptied.output == "Deleted 1 item.\nThe trash is empty.\n")
        #expect(directory.names("container/Library/Trash/files").isEmpty)
    }

    @Test func documentTypesManifestExtendsTheRegistry() throws {
        directory.make(["types.json": """
            {"supportsOpeningDocumentsInPlace": true,
             "documentTypes": [{"name": "Trip", "role": "Editor", "rank": "Owner", "contentTypes": ["com.example.trip"]}],
             "exportedTypes": [{"identifier": "com.example.trip", "description": "Trip Plan",
                                "conformsTo": ["com.apple.package"], "extensions": ["trip"]},
                               {"identifier": "com.example.track", "description": "GPS Track", "conformsTo": ["public.data"],
                                "mimeTypes": ["application/x-example-track"], "magic": [{"value": "TRK\\\\x01"}]}]}
            """, "bad.json": #"{"documentTypes": [{"name": "T", "role": "Boss", "rank": "Owner", "contentTypes": ["public.data"]}]}"#,
            "container/Documents/UserFiles/day one": "TRK\u{01} 51.5N 0.1W"])
        let result = try CofferBinary.run(["--container", container, "--document-types", directory.url("types.json"),
                                           "-c", "mkdir Japan.trip; info Japan.trip"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("Kind:      package\n"))
        #expect(result.output.contains("Type:      Trip Plan (com.example.trip)\n"))
        // A file known by the manifest's magic alone.
        let track = try CofferBinary.run(["--container", container, "--document-types", directory.url("types.json"),
                                          "-c", "info 'day one'"])
        #expect(track.output.contains("GPS Track (com.example.track)"), "\(track.output)")
        // Without the manifest the same folder is only a folder.
        #expect(try coffer("info Japan.trip").output.contains("Kind:      folder\n"))

        let refused = try CofferBinary.run(["--container", container, "--document-types", directory.url("bad.json"),
                                            "-c", "ls"])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("role “Boss” must be one of"))
        // Not JSON, the wrong shape, or no file at all: each named, status 2.
        directory.make(["broken.json": #"{"documentTypes": ["#, "shape.json": #"{"documentTypes": 3}"#])
        for (file, reason) in [("broken.json", "The given data was not valid JSON. Check the arguments"),
                               ("shape.json", "documentTypes: Expected to decode Array<Any> but found number instead. Check"),
                               ("missing.json", "cannot be read. Check")] {
            let bad = try CofferBinary.run(["--container", container, "--document-types", directory.url(file), "-c", "ls"])
            #expect(bad.status == 2)
            #expect(bad.errors.contains("Invalid arguments: --document-types “\(directory.url(file))”"), "\(bad.errors)")
            #expect(bad.errors.contains(reason), "\(bad.errors)")
        }
    }

    @Test func longListingPutsTheNameFirst() throws {
        _ = try coffer("ls")
        directory.make(["container/Documents/UserFiles/报告.pdf": "12345", "container/Documents/UserFiles/.hidden-file": ""])
        let result = try coffer("ls -l")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("Download ") && lines[0].hasSuffix("Folder"))
        #expect(lines[2].hasPrefix("报告.pdf") && lines[2].contains("5 B") && lines[2].hasSuffix("PDF document"))
        #expect(try coffer("ls -a").output.contains(".hidden-file"))
    }

    @Test func errorsAreInTheChosenLanguageWithoutHostPaths() throws {
        let english = try coffer("cd missing")
        #expect(english.errors.contains("“files:/missing” doesn't exist."))
        let chinese = try coffer("cd missing", language: "zh-Hans")
        #expect(chinese.errors.contains("“files:/missing” 不存在。"))
        let fromLocale = try CofferBinary.run(["--container", container, "-c", "cd missing"],
                                              environment: ["LANG": "zh_CN.UTF-8"])
        #expect(fromLocale.errors.contains("不存在"))
        for result in [english, chinese, fromLocale] { #expect(!result.errors.contains(directory.path)) }
    }

    @Test func escapesAreRefused() throws {
        _ = try coffer("ls")
        directory.make(["outside/secret.txt": "SECRET"])
        directory.link("container/Documents/UserFiles/out", to: directory.url("outside"))
        let result = try coffer("ls ../..; cd out; cp out/secret.txt Download; ls out; mkdir out/x")
        #expect(result.status == 1)
        #expect(!result.output.contains("secret.txt"))
        #expect(directory.names("outside") == ["secret.txt"])
        #expect(directory.names("container/Documents/UserFiles/Download").isEmpty)
        #expect(result.errors.contains("leads outside"))
    }

    @Test func aDamagedContainerIsReportedClearly() throws {
        directory.make(["container/Documents/UserFiles": "I am a file"])
        let result = try coffer("ls")
        #expect(result.status == 1)
        #expect(result.errors.contains("“Documents/UserFiles” should be a folder"))
        #expect(!result.errors.contains(directory.path))
    }

    @Test func treeInfoDuMountsAndHelp() throws {
        _ = try coffer("mkdir -p A/B; mkdir C")
        directory.make(["container/Documents/UserFiles/A/B/x.json": "{}"])
        let tree = try coffer("tree")
        #expect(tree.output == "files:/\n├── A/\n│   └── B/\n│       └── x.json\n├── C/\n├── Download/\n└── Import/\n\n5 folders, 1 file\n")
        #expect(try coffer("tree -L 1").output.contains("└── Import/\n\n4 folders, 0 files"))
        let info = try coffer("info A/B/x.json")
        #expect(info.output.contains("JSON document (public.json)"))
        #expect(info.output.contains("2 B (2 bytes)"))
        #expect(try coffer("du A").output.hasPrefix("2 B\t2\tfiles:/A\t"))
        #expect(try coffer("mounts").output == "files:\tread-write\ntrash:\tread-only\n")
        let help = try coffer("help cp")
        #expect(help.output.hasPrefix("Usage: cp [-r]"))
        #expect(try coffer("help cp", language: "zh-Hans").output.hasPrefix("用法：cp [-r]"))
    }

    @Test func versionAndUsage() throws {
        let version = try CofferBinary.run(["--version"])
        #expect(version.status == 0 && version.output.hasPrefix("coffer "))
        let usage = try CofferBinary.run(["--help"])
        #expect(usage.output.contains("--container DIR"))
        let bad = try CofferBinary.run(["--bogus"])
        #expect(bad.status == 2 && bad.errors.contains("unexpected argument"))
        #expect(usage.output.contains("--thumbnail-max-age DAYS") && usage.output.contains("--thumbnail-max-size MB"))
    }

    @Test func thumbnailLimitsAreNumbersOrMinusOne() throws {
        let container = directory.url("limits")
        let none = try CofferBinary.run(["--container", container, "--thumbnail-max-age", "-1", "--thumbnail-max-size", "-1",
                                         "-c", "pwd"])
        #expect(none.status == 0, "\(none.errors)")
        for (option, value) in [("--thumbnail-max-age", "soon"), ("--thumbnail-max-size", "-2"), ("--thumbnail-max-size", "1.5")] {
            let wrong = try CofferBinary.run(["--container", container, option, value, "-c", "pwd"])
            #expect(wrong.status == 2 && wrong.errors.contains("\(option) \(value): use a number"), "\(wrong.errors)")
        }
    }
}
