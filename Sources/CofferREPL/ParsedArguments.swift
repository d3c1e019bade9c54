import CofferCore

/// A command's words split into flags, options with values, and operands.
struct ParsedArguments {
    var flags: Set<String> = []
    var options: [String: String] = [:]
    var operands: [String] = []

    /// Parses `-la`, `-L 2`, `--keep-both` and operands; `--` ends the flags.
    init(_ words: ArraySlice<String>, flags shortFlags: String = "", options shortOptions: String = "",
         longFlags: Set<String> = [], language: Language) throws(CofferError) {
        var index = words.startIndex
        var flagsEnded = false
        while index < words.endIndex {
            let word = words[index]
            index += 1
            if flagsEnded || word == "-" || !word.hasPrefix("-") {
                operands.append(word)
                continue
            }
            if word == "--" { flagsEnded = true; continue }
            if word.hasPrefix("--") {
                let name = String(word.dropFirst(2))
                guard longFlags.contains(name) else { throw Self.unknown(word, language) }
                flags.insert(name)
                continue
            }
            var letters = word.dropFirst()[...]
            while let letter = letters.first {
                letters = letters.dropFirst()
                if shortOptions.contains(letter) {
                    let value: String
                    if !letters.isEmpty {
                        value = String(letters)
                        letters = ""
                    } else if index < words.endIndex {
                        value = words[index]
                        index += 1
                    } else {
                        throw CofferError(.invalidArgument, detail: LocalizedText(
                            "option -\(letter) needs a value", "选项 -\(letter) 需要一个值")(language))
                    }
                    options[String(letter)] = value
                } else if shortFlags.contains(letter) {
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

    /// The conflict policy chosen with `--keep-both` or `--replace` (`fail` without either).
    func conflictPolicy(language: Language) throws(CofferError) -> ConflictPolicy {
        switch (flags.contains("keep-both"), flags.contains("replace")) {
        case (true, true):
            throw CofferError(.invalidArgument, detail: LocalizedText(
                "--keep-both and --replace cannot be used together", "--keep-both 和 --replace 不能同时使用")(language))
        case (true, false): return .keepBoth
        case (false, true): return .replace
        case (false, false): return .fail
        }
    }
}
