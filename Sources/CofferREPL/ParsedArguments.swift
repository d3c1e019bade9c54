import CofferCore
import FileService

/// A command's words split into flags, options with values, and operands, by its syntax.
struct ParsedArguments {
    var flags: Set<String> = []
    var options: [String: String] = [:]
    /// Every value of each option given more than once, in order (`--form a=1 --form b=2`).
    var repeated: [String: [String]] = [:]
    var operands: [String] = []

    /// Parses `-la`, `-L 2`, `-L2`, `--keep-both`, `--into DIR`, `--into=DIR` and operands;
    /// `--` ends the flags and a lone `-` is an operand.
    init(_ words: ArraySlice<String>, syntax: CommandSyntax, language: Language) throws(CofferError) {
        var index = words.startIndex
        var flagsEnded = false
        func value(for option: String) throws(CofferError) -> String {
            guard index < words.endIndex else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "option \(option) needs a value", "选项 \(option) 需要一个值")(language))
            }
            defer { index += 1 }
            return words[index]
        }
        while index < words.endIndex {
            let word = words[index]
            index += 1
            if flagsEnded || word == "-" || !word.hasPrefix("-") {
                operands.append(word)
                continue
            }
            if word == "--" { flagsEnded = true; continue }
            if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                if syntax.longOptions[name] != nil {
                    options[name] = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst())
                                                       : try value(for: word)
                    repeated[name, default: []].append(options[name]!)
                } else if syntax.longFlags.contains(name) && !body.contains("=") {
                    flags.insert(name)
                } else {
                    throw Self.unknown(word, language)
                }
                continue
            }
            var letters = word.dropFirst()[...]
            while let letter = letters.first {
                letters = letters.dropFirst()
                if syntax.shortOptions[letter] != nil {
                    options[String(letter)] = letters.isEmpty ? try value(for: "-\(letter)") : String(letters)
                    letters = ""
                } else if syntax.shortFlags.contains(letter) {
                    flags.insert(String(letter))
                } else {
                    throw Self.unknown("-\(letter)", language)
                }
            }
        }
    }

    private static func unknown(_ flag: String, _ language: Language) -> CofferError {
        CofferError(.invalidArgument, detail: LocalizedText("unknown option \(flag)", "未知选项 \(flag)")(language))
    }

    /// The conflict policy chosen with `--keep-both`, `--replace` or `--replace-folder`, or
    /// `nil` when none was given.
    func chosenConflictPolicy(language: Language) throws(CofferError) -> ConflictPolicy? {
        let chosen: [ConflictPolicy] = [("keep-both", .keepBoth), ("replace", .replace), ("replace-folder", .replaceFolder)]
            .compactMap { flag, policy in flags.contains(flag) ? policy : nil }
        if chosen.count <= 1 { return chosen.first }
        // --replace-folder is a replace that may also put a file in a folder's place.
        if chosen == [.replace, .replaceFolder] { return .replaceFolder }
        throw CofferError(.invalidArgument, detail: LocalizedText(
            "--keep-both cannot be used with --replace or --replace-folder",
            "--keep-both 不能与 --replace 或 --replace-folder 同时使用")(language))
    }

    /// What `--keep-both`, `--replace` or `--replace-folder` chose; `nil` without any, for the
    /// REPL's row of ``FrontEndDefaults`` (a person at a terminal is asked, a script fails when
    /// the name is taken).
    func conflictChoice(language: Language) throws(CofferError) -> ConflictChoice? {
        try chosenConflictPolicy(language: language).map(ConflictChoice.policy)
    }
}
