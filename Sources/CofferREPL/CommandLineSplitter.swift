/// Splits a command line into words the way a POSIX shell does, without expansion.
///
/// - `'…'` keeps everything literally; `"…"` keeps everything but `\"`, `\\`, `\$` and
///   `` \` ``; outside quotes a backslash escapes the next character.
/// - Unquoted whitespace separates words; unquoted `;` separates commands.
/// - An unquoted `#` at the start of a word starts a comment.
public enum CommandLineSplitter {
    public enum Failure: Error, Equatable, Sendable {
        case unterminatedQuote(Character)
        case danglingBackslash
    }

    /// The words of a single command; a `;` is an error here, it is only a word.
    public static func words(_ line: String) throws(Failure) -> [String] {
        try commands(line, separateOnSemicolon: false).first ?? []
    }

    /// The commands of a line, each as its words; empty commands are dropped.
    public static func commands(_ line: String, separateOnSemicolon: Bool = true) throws(Failure) -> [[String]] {
        var commands: [[String]] = []
        var words: [String] = []
        var word = ""
        var inWord = false
        var iterator = line.makeIterator()

        func endWord() {
            if inWord { words.append(word) }
            word = ""
            inWord = false
        }
        func endCommand() {
            endWord()
            if !words.isEmpty { commands.append(words) }
            words = []
        }

        while let character = iterator.next() {
            switch character {
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" { closed = true; break }
                    word.append(next)
                }
                if !closed { throw .unterminatedQuote("'") }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { throw .unterminatedQuote("\"") }
                        if !["\"", "\\", "$", "`"].contains(escaped) { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
                if !closed { throw .unterminatedQuote("\"") }
            case "\\":
                guard let escaped = iterator.next() else { throw .danglingBackslash }
                inWord = true
                if escaped != "\n" { word.append(escaped) }
            case ";" where separateOnSemicolon:
                endCommand()
            case "#" where !inWord:
                // A comment runs to the end of the line.
                while let next = iterator.next(), next != "\n" {}
                endCommand()
            case " ", "\t", "\n", "\r":
                endWord()
            default:
                inWord = true
                word.append(character)
            }
        }
        endCommand()
        return commands
    }

    /// `word` written so that `words(_:)` reads it back unchanged: bare when it is safe,
    /// else in single quotes (with `'\''` for quotes inside).
    public static func quote(_ word: String) -> String {
        let safe = !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                ? (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./:,+=@%".unicodeScalars.contains(scalar))
                : false
        }
        if safe { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

import Foundation
