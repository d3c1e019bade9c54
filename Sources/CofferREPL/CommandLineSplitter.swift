import Foundation

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

    /// A word as scanned: its text with quotes and escapes removed, and where it starts.
    public struct Word: Equatable, Sendable {
        public var text: String
        /// Offset in UTF-8 bytes of the word's first character (a quote, if it starts with one).
        public var start: Int
        /// When the word has a wildcard (`*`, `?`, `[`) outside quotes: the word as a glob
        /// pattern, the characters that were quoted or escaped escaped with `\` (so `'*'.txt`
        /// is `\*.txt`, matching a name that starts with a star). `nil` otherwise.
        public var pattern: String?

        public init(text: String, start: Int, pattern: String? = nil) {
            self.text = text
            self.start = start
            self.pattern = pattern
        }
    }

    /// What a scan of a whole line, or of the part before the cursor, found.
    public struct Scan: Equatable, Sendable {
        /// Every command, each as its words. Empty commands are kept, so a line ending
        /// in `; ` ends with an empty command.
        public var commands: [[Word]] = [[]]
        /// The quote still open at the end of the line, if any.
        public var openQuote: Character?
        /// Whether the line ends with a lone backslash.
        public var danglingBackslash = false
        /// Whether the line ends inside a word (no separator after the last one).
        public var endsInWord = false
        /// Whether the line ends inside a comment.
        public var endsInComment = false
    }

    /// Scans `line` without failing: an open quote or a trailing backslash is recorded,
    /// which is what completion needs for a line still being typed.
    public static func scan(_ line: String, separateOnSemicolon: Bool = true) -> Scan {
        var scan = Scan()
        var word = String.UnicodeScalarView()
        // The word as a glob pattern, and whether a wildcard came outside quotes.
        var pattern = String.UnicodeScalarView()
        var globbed = false
        var wordStart: Int?
        var offset = 0
        var scalars = line.unicodeScalars.makeIterator()

        func next() -> Unicode.Scalar? {
            guard let scalar = scalars.next() else { return nil }
            offset += UTF8.width(scalar)
            return scalar
        }
        func beginWord(at position: Int) {
            if wordStart == nil { wordStart = position }
        }
        func endWord() {
            if let start = wordStart {
                scan.commands[scan.commands.count - 1].append(Word(text: String(word), start: start,
                                                                   pattern: globbed ? String(pattern) : nil))
            }
            word = String.UnicodeScalarView()
            pattern = String.UnicodeScalarView()
            globbed = false
            wordStart = nil
        }
        /// A character taken literally (quoted or escaped): escaped in the pattern when it is special there.
        func literal(_ scalar: Unicode.Scalar) {
            word.append(scalar)
            if "*?[]\\".unicodeScalars.contains(scalar) { pattern.append("\\") }
            pattern.append(scalar)
        }

        while true {
            let position = offset
            guard let scalar = next() else { break }
            switch scalar {
            case "'":
                beginWord(at: position)
                scan.openQuote = "'"
                while let inner = next() {
                    if inner == "'" { scan.openQuote = nil; break }
                    literal(inner)
                }
            case "\"":
                beginWord(at: position)
                scan.openQuote = "\""
                while let inner = next() {
                    if inner == "\"" { scan.openQuote = nil; break }
                    if inner == "\\" {
                        guard let escaped = next() else { break }
                        if !["\"", "\\", "$", "`"].contains(escaped) { literal("\\") }
                        literal(escaped)
                    } else {
                        literal(inner)
                    }
                }
            case "\\":
                beginWord(at: position)
                guard let escaped = next() else { scan.danglingBackslash = true; break }
                if escaped != "\n" { literal(escaped) }
            case ";" where separateOnSemicolon:
                endWord()
                scan.commands.append([])
            case "#" where wordStart == nil:
                // A comment runs to the end of the line.
                scan.endsInComment = true
                while let inner = next() {
                    if inner == "\n" { scan.endsInComment = false; break }
                }
            case " ", "\t", "\n", "\r":
                endWord()
            default:
                beginWord(at: position)
                word.append(scalar)
                pattern.append(scalar)
                if scalar == "*" || scalar == "?" || scalar == "[" { globbed = true }
            }
        }
        scan.endsInWord = wordStart != nil
        endWord()
        return scan
    }

    /// The words of a single command; a `;` is an error here, it is only a word.
    public static func words(_ line: String) throws(Failure) -> [String] {
        try commands(line, separateOnSemicolon: false).first ?? []
    }

    /// The commands of a line, each as its words; empty commands are dropped.
    public static func commands(_ line: String, separateOnSemicolon: Bool = true) throws(Failure) -> [[String]] {
        try scannedCommands(line, separateOnSemicolon: separateOnSemicolon).map { $0.map(\.text) }
    }

    /// The same, each word with its glob pattern when it has one (``Word/pattern``).
    public static func scannedCommands(_ line: String, separateOnSemicolon: Bool = true) throws(Failure) -> [[Word]] {
        let scan = scan(line, separateOnSemicolon: separateOnSemicolon)
        if let quote = scan.openQuote { throw .unterminatedQuote(quote) }
        if scan.danglingBackslash { throw .danglingBackslash }
        return scan.commands.filter { !$0.isEmpty }
    }

    /// Whether `word` reads back unchanged without quotes.
    static func isSafeUnquoted(_ word: String) -> Bool {
        !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-_./:,+=@%~".unicodeScalars.contains(scalar))
        }
    }

    /// `word` written so that `words(_:)` reads it back unchanged: bare when it is safe,
    /// else in single quotes (with `'\''` for quotes inside).
    public static func quote(_ word: String) -> String {
        isSafeUnquoted(word) ? word : quoted(word, with: "'", closed: true)
    }

    /// `word` inside `quote` (`'` or `"`), escaped as that quote needs; left open when
    /// `closed` is false, so typing can go on inside it.
    static func quoted(_ word: String, with quote: Character, closed: Bool) -> String {
        var text = String(quote)
        if quote == "'" {
            text += word.replacingOccurrences(of: "'", with: "'\\''")
        } else {
            for character in word {
                if "\"\\$`".contains(character) { text.append("\\") }
                text.append(character)
            }
        }
        if closed { text.append(quote) }
        return text
    }
}
