import CofferBackends
import CofferCore
import CofferREPL
import CofferRuntime
import CofferTestSupport
import FileService
import Foundation
import Testing

@MainActor
struct CommandInterpreterTests {
    let directory = TemporaryDirectory("repl")
    let output = TextOutput()
    let errors = TextOutput()
    let interpreter: CommandInterpreter

    init() async throws {
        let container = try await Container.open(at: directory.path)
        let service = try FileService.standard(container: container)
        interpreter = CommandInterpreter(session: try service.openSession(SessionOptions(frontEnd: "repl", language: .english)),
                                         output: output, errors: errors)
    }

    @Test func listsNameFirstInServiceOrder() async throws {
        #expect(await interpreter.run(line: "mkdir Zeta alpha; cd alpha; mkdir file10 file2; cd ..") == .success)
        #expect(await interpreter.run(line: "ls; ls alpha") == .success)
        #expect(output.text == "alpha\nDownload\nImport\nZeta\nfile2\nfile10\n")
    }

    @Test func failuresPrintTheUserMessageAndCarryOn() async throws {
        #expect(await interpreter.run(line: "cd nowhere; mkdir ok") == .failure)
        #expect(errors.text == "coffer: “files:/nowhere” doesn't exist. It may have been moved or deleted; check the name and list the folder again.\n")
        #expect(directory.exists("Documents/UserFiles/ok"))
    }

    @Test func speaksChinese() async throws {
        interpreter.language = .simplifiedChinese
        #expect(await interpreter.run(line: "cd 不存在") == .failure)
        #expect(errors.text.contains("“files:/不存在” 不存在。"))
        #expect(await interpreter.run(line: "help") == .success)
        #expect(output.text.contains("新建文件夹。"))
    }

    @Test func conflictFlagsChooseThePolicy() async throws {
        directory.make(["Documents/UserFiles/a.txt": "A", "Documents/UserFiles/Download/a.txt": "old"])
        #expect(await interpreter.run(line: "cp a.txt Download") == .failure)
        #expect(await interpreter.run(line: "cp --keep-both a.txt Download") == .success)
        #expect(directory.contents("Documents/UserFiles/Download/a (2).txt") == "A")
        #expect(await interpreter.run(line: "mv --replace a.txt Download") == .success)
        #expect(directory.contents("Documents/UserFiles/Download/a.txt") == "A")
        // What --replace displaced is a version of the file, and --replace-folder goes with --replace.
        #expect(await interpreter.run(line: "versions Download/a.txt") == .success)
        #expect(output.text.contains(" 3 B ") || output.text.contains("3 B"), "\(output.text)")
        #expect(await interpreter.run(line: "cp --keep-both --replace x y") == .failure)
        #expect(errors.text.contains("--keep-both cannot be used with --replace or --replace-folder"))
    }

    @Test func copyingAFolderNeedsR() async throws {
        #expect(await interpreter.run(line: "cp Download D2") == .failure)
        #expect(await interpreter.run(line: "cp -r Download D2") == .success)
        #expect(directory.exists("Documents/UserFiles/D2"))
    }

    @Test func cdAndPwdAndRelativePaths() async throws {
        #expect(await interpreter.run(line: "cd Download; pwd; cd; pwd; cd /Import; cd ../Download; pwd") == .success)
        #expect(output.text == "files:/Download\nfiles:/\nfiles:/Download\n")
        #expect(await interpreter.run(line: "cd ../..") == .failure)
        #expect(errors.text.contains("leads outside"))
    }

    @Test func quitStopsTheLine() async throws {
        #expect(await interpreter.run(line: "pwd; quit; mkdir never") == .quit)
        #expect(!directory.exists("Documents/UserFiles/never"))
    }

    @Test func unknownCommandsAndBadOptionsFail() async throws {
        #expect(await interpreter.run(line: "frobnicate") == .failure)
        #expect(await interpreter.run(line: "ls -Q") == .failure)
        #expect(errors.text.contains("unknown command “frobnicate”"))
        #expect(errors.text.contains("unknown option -Q"))
    }

    @Test func coloursMarkFoldersAndErrorsOnlyWhenOn() async throws {
        directory.make(["Documents/UserFiles/notes.txt": "x"])
        #expect(await interpreter.run(line: "ls; cd nowhere") == .failure)
        #expect(!output.text.contains("\u{1B}") && !errors.text.contains("\u{1B}"))
        interpreter.outputStyle = .colored
        interpreter.errorStyle = .colored
        #expect(await interpreter.run(line: "ls; cd nowhere") == .failure)
        #expect(output.text.hasSuffix("\u{1B}[1;34mDownload\u{1B}[0m\n\u{1B}[1;34mImport\u{1B}[0m\nnotes.txt\n"))
        #expect(errors.text.hasSuffix("\u{1B}[1;31mcoffer:\u{1B}[0m “files:/nowhere” doesn't exist. "
                                      + "It may have been moved or deleted; check the name and list the folder again.\n"))
    }

    @Test func longListingsStayAlignedWithColours() async throws {
        directory.make(["Documents/UserFiles/a-long-name.txt": "x"])
        interpreter.outputStyle = .colored
        #expect(await interpreter.run(line: "ls -l") == .success)
        let lines = output.text.split(separator: "\n").map { $0.replacingOccurrences(of: "\u{1B}[1;34m", with: "")
            .replacingOccurrences(of: "\u{1B}[0m", with: "") }
        let sizeColumns = Set(lines.map { $0.distance(from: $0.startIndex, to: $0.firstIndex(of: "2")!) })
        #expect(sizeColumns.count == 1, "\(lines)")
    }

    @Test func optionsTakeValuesJoinedOrApart() async throws {
        directory.make(["Documents/UserFiles/A/B/C/d.txt": "x"])
        #expect(await interpreter.run(line: "tree -L1 A; tree -L 2 A") == .success)
        #expect(output.text == "A\n└── B/\n\n1 folder, 0 files\nA\n└── B/\n    └── C/\n\n2 folders, 0 files\n")
        #expect(await interpreter.run(line: "tree -L") == .failure)
        #expect(errors.text.contains("option -L needs a value"))
    }

    @Test func helpForOneCommandInBothLanguages() async throws {
        #expect(await interpreter.run(line: "help cp") == .success)
        #expect(output.text.hasPrefix("Usage: cp [-r] [--keep-both|--replace|--replace-folder] source… destination\n"))
        #expect(output.text.contains("Examples:\n  cp report.pdf Download\n"))
        interpreter.language = .simplifiedChinese
        #expect(await interpreter.run(line: "help cp") == .success)
        #expect(output.text.contains("用法：cp [-r]"))
        #expect(output.text.contains("复制项目；复制文件夹需要 -r。"))
        #expect(output.text.contains("示例：\n  cp report.pdf Download\n"))
    }
}

/// The REPL's own hints: every one in both languages, and used for what it covers.
struct REPLHintTests {
    @Test(arguments: CofferError.Kind.allKinds)
    func everyHintIsInBothLanguages(_ kind: CofferError.Kind) {
        #expect(MessageHints.repl.problems(for: kind).isEmpty, "\(MessageHints.repl.problems(for: kind))")
    }
}
