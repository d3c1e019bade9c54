import CofferCore
@testable import CofferREPL
import CofferTestSupport
import Testing

/// A fixed tree of names standing in for the service and the host.
struct FakeSource: CompletionSource {
    var sandbox: [String: [CompletionEntry]] = [
        "files:/": [
            CompletionEntry(name: "Download", isFolder: true), CompletionEntry(name: "Documents", isFolder: true),
            CompletionEntry(name: "My Notes", isFolder: true), CompletionEntry(name: "报告 2026", isFolder: true),
            CompletionEntry(name: "it's.txt", isFolder: false), CompletionEntry(name: "notes.txt", isFolder: false),
            CompletionEntry(name: "Report 1.pdf", isFolder: false), CompletionEntry(name: "Report 2.pdf", isFolder: false),
            CompletionEntry(name: ".hidden", isFolder: false), CompletionEntry(name: "tracks", isFolder: true),
        ],
        "files:/Download": [CompletionEntry(name: "song.mp3", isFolder: false), CompletionEntry(name: "Sub", isFolder: true)],
        "trash:/": [CompletionEntry(name: "old.txt", isFolder: false)],
    ]
    var host: [String: [CompletionEntry]] = [
        "/home/me/": [CompletionEntry(name: "Pictures", isFolder: true), CompletionEntry(name: "photo 1.jpg", isFolder: false),
                      CompletionEntry(name: ".bashrc", isFolder: false)],
        "./": [CompletionEntry(name: "local.txt", isFolder: false)],
    ]

    func sandboxEntries(in folder: VirtualPath, includeHidden: Bool) -> [CompletionEntry] {
        (sandbox[folder.description] ?? []).filter { includeHidden || !$0.name.hasPrefix(".") }
    }

    func hostEntries(inDirectory path: String) -> [CompletionEntry] {
        host[path.hasSuffix("/") ? path : path + "/"] ?? []
    }

    var mountNames: [String] { ["files", "trash"] }
    var homeDirectory: String? { "/home/me" }
}

struct CompleterTests {
    var completer = Completer(currentFolder: .root(), source: FakeSource())

    /// The line after Tab: the replacement put in place of the word before the cursor.
    func afterTab(_ line: String) -> String {
        let completion = completer.complete(line)
        guard let replacement = completion.replacement else { return line }
        return String(decoding: Array(line.utf8)[..<completion.start], as: UTF8.self) + replacement
    }

    @Test func completesCommandNames() {
        #expect(afterTab("mkd") == "mkdir ")
        #expect(afterTab("ls; mkd") == "ls; mkdir ")
        #expect(completer.complete("m").candidates == ["mkdir", "mounts", "mv"])
        #expect(completer.complete("zz").candidates.isEmpty)
    }

    @Test func completesFlagsFromTheCommandsSyntax() {
        #expect(afterTab("cp --ke") == "cp --keep-both ")
        #expect(completer.complete("ls -").candidates == ["--thumbnails", "-1", "-a", "-l", "-r", "-S", "-t"])
        #expect(afterTab("ls --th") == "ls --thumbnails ")
        #expect(completer.complete("tree -").candidates.contains("-L"))
        // After `--`, a dash starts a name, not a flag.
        #expect(completer.complete("ls -- -").candidates.isEmpty)
    }

    @Test func foldersGetASlashAndFilesASpace() {
        #expect(afterTab("cd Dow") == "cd Download/")
        #expect(afterTab("info no") == "info notes.txt ")
        #expect(afterTab("info Download/so") == "info Download/song.mp3 ")
    }

    @Test func namesThatNeedQuotingAreQuoted() throws {
        #expect(afterTab("cd My") == "cd 'My Notes/'")
        #expect(afterTab("cd 报") == "cd '报告 2026/'")
        #expect(afterTab("info it") == #"info 'it'\''s.txt' "#)
        // The quote the user opened is kept.
        #expect(afterTab("cd \"My") == "cd \"My Notes/\"")
        #expect(afterTab("cd My\\ N") == "cd 'My Notes/'")
        // Whatever was completed reads back as the name.
        #expect(try CommandLineSplitter.words(afterTab("info it")) == ["info", "it's.txt"])
    }

    @Test func severalMatchesExtendToTheirCommonPrefixAndStayOpen() {
        let completion = completer.complete("info Rep")
        #expect(completion.replacement == "'Report ")
        #expect(completion.candidates == ["Report 1.pdf", "Report 2.pdf"])
        // Nothing more in common: nothing to add, only the list.
        let again = completer.complete("info 'Report ")
        #expect(again.replacement == nil)
        #expect(again.candidates == ["Report 1.pdf", "Report 2.pdf"])
        #expect(afterTab("info 'Report 2") == "info 'Report 2.pdf' ")
    }

    @Test func pathsAreRelativeToTheCurrentFolder() throws {
        var inDownload = completer
        inDownload.currentFolder = try VirtualPath(parsing: "files:/Download")
        #expect(afterTab("info so") == "info so")  // not at the root any more
        #expect(inDownload.complete("info so").replacement == "song.mp3 ")
        #expect(inDownload.complete("cd ../Do").candidates == ["Documents/", "Download/"])
        #expect(inDownload.complete("cd /Dow").replacement == "/Download/")
    }

    @Test func cdOffersOnlyFolders() {
        #expect(completer.complete("cd ").candidates == ["Documents/", "Download/", "My Notes/", "tracks/", "报告 2026/"])
    }

    @Test func hiddenNamesOnlyAfterADot() {
        #expect(!completer.complete("info ").candidates.contains(".hidden"))
        #expect(afterTab("info .h") == "info .hidden ")
    }

    @Test func mountNamesComplete() {
        #expect(completer.complete("cd tr").candidates == ["tracks/", "trash:/"])
        #expect(afterTab("cd tras") == "cd trash:/")
        #expect(afterTab("info trash:/o") == "info trash:/old.txt ")
    }

    @Test func matchingIgnoresCaseWhenNothingMatchesExactly() {
        #expect(afterTab("cd dow") == "cd Download/")
    }

    @Test func hostPathsForArgumentsThatTakeThem() {
        #expect(completer.complete("import ~/Pi").replacement == "~/Pictures/")
        #expect(completer.complete("import ~/ph").replacement == "'~/photo 1.jpg' ")
        #expect(completer.complete("import ~/").candidates == ["photo 1.jpg", "Pictures/"])
        #expect(completer.complete("import lo").replacement == "local.txt ")
        #expect(completer.complete("open ~/Pi").replacement == "~/Pictures/")
        // An option's value is of the option's kind.
        #expect(completer.complete("import x --into Dow").replacement == "Download/")
        // export: a sandbox item, then a host folder.
        #expect(completer.complete("export Dow").replacement == "Download/")
        #expect(completer.complete("export notes.txt ~/Pi").replacement == "~/Pictures/")
    }

    @Test func optionValuesAndFreeTextGetNothing() {
        #expect(completer.complete("tree -L ").candidates.isEmpty)
        #expect(completer.complete("rename notes.txt no").candidates.isEmpty)
        #expect(completer.complete("pwd ").candidates.isEmpty)
        #expect(completer.complete("ls # no").candidates.isEmpty)
    }

    @Test func helpCompletesCommandNames() {
        #expect(afterTab("help ren") == "help rename ")
    }
}
