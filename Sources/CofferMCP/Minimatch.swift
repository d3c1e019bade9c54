/// Glob patterns read as the reference filesystem server reads them: `minimatch(relativePath,
/// pattern, {dot: true})` — braces expanded first (`{a,b}`, `{1..3}`), then the pattern split at
/// `/` and matched segment by segment against the path below the folder searched.
///
/// - `*` is any run of characters within one segment (never `/`, never an empty segment);
///   `?` one character; `[a-z]`, `[!x]`, `[^x]`, `[[:alpha:]]` one of a set; `\` escapes.
/// - `**` as a whole segment is any number of segments (none too, except at the end of the
///   pattern, where it takes at least one), never `.` or `..`.
/// - Extended globs: `@(a|b)` one of, `?(a|b)` at most one, `*(a|b)` any number, `+(a|b)` at
///   least one, `!(a|b)` anything but.
/// - `dot: true`: names starting with `.` match like any other.
/// - A pattern starting with `!` matches what the rest does not; one starting with `#` nothing.
/// - Case counts; `*.txt` is tried on the whole path below the folder, so it matches `a.txt`
///   but not `sub/a.txt` (that is `**/*.txt`).
struct Minimatch: Sendable {
    let source: String
    private let alternatives: [[Segment]]
    private let negated: Bool
    private let comment: Bool

    init(_ pattern: String) {
        source = pattern
        var text = Substring(pattern)
        var negated = false
        while text.first == "!" && text.dropFirst().first != "(" {
            negated.toggle()
            text = text.dropFirst()
        }
        self.negated = negated
        comment = text.first == "#"
        alternatives = Self.expandBraces(String(text)).map { expanded in
            Self.split(expanded).map(Segment.init)
        }
    }

    /// Whether `path` (relative, `/`-separated) matches.
    func matches(_ path: String) -> Bool {
        guard !comment else { return false }
        let parts = Self.split(path)[...]
        let found = alternatives.contains { Self.match($0[...], parts) }
        return found != negated
    }

    // MARK: Segments

    private static func split(_ text: String) -> [String] {
        text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    private static func match(_ pattern: ArraySlice<Segment>, _ file: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return file.isEmpty }
        if case .globstar = first {
            let rest = pattern.dropFirst()
            if rest.isEmpty { return !file.isEmpty && file.allSatisfy { $0 != "." && $0 != ".." } }
            var start = file.startIndex
            while start < file.endIndex {
                if match(rest, file[start...]) { return true }
                if file[start] == "." || file[start] == ".." { return false }
                start += 1
            }
            return false
        }
        guard let name = file.first, first.matches(name) else { return false }
        return match(pattern.dropFirst(), file.dropFirst())
    }

    private enum Segment: Sendable {
        case globstar
        case literal(String)
        case pattern([Token])

        init(_ text: String) {
            if text == "**" { self = .globstar; return }
            let tokens = Token.parse(Array(text.unicodeScalars)[...])
            if tokens.allSatisfy({ if case .scalar = $0 { true } else { false } }) {
                self = .literal(String(String.UnicodeScalarView(tokens.compactMap { if case .scalar(let s) = $0 { s } else { nil } })))
            } else {
                self = .pattern(tokens)
            }
        }

        func matches(_ name: String) -> Bool {
            switch self {
            case .globstar: return true
            case .literal(let text): return text == name
            case .pattern(let tokens):
                // With `dot`, still never `.` or `..`, and never an empty segment.
                guard !name.isEmpty, name != ".", name != ".." else { return false }
                // A bound on the work one name may cost: a pathological pattern (`+(a|aa)b`)
                // against a long name fails instead of running for minutes.
                var budget = Token.stepLimit
                return Token.match(tokens[...], Array(name.unicodeScalars)[...], &budget)
            }
        }
    }

    // MARK: Tokens of one segment

    private indirect enum Token: Sendable {
        case scalar(Unicode.Scalar)
        case any
        case star
        case set(ScalarSet)
        /// `@ ? * + !` followed by alternatives in parentheses.
        case extended(Character, [[Token]])

        static func parse(_ text: ArraySlice<Unicode.Scalar>) -> [Token] {
            var tokens: [Token] = []
            var index = text.startIndex
            while index < text.endIndex {
                let scalar = text[index]
                let next = text.index(after: index)
                if "@?*+!".unicodeScalars.contains(scalar), next < text.endIndex, text[next] == "(",
                   let (alternatives, end) = Minimatch.group(text, from: next, closing: ")", separator: "|") {
                    tokens.append(.extended(Character(scalar), alternatives.map { parse($0) }))
                    index = end
                    continue
                }
                switch scalar {
                case "\\" where next < text.endIndex:
                    tokens.append(.scalar(text[next]))
                    index = text.index(after: next)
                    continue
                case "*":
                    if case .star? = tokens.last {} else { tokens.append(.star) }
                case "?": tokens.append(.any)
                case "[":
                    if let (set, end) = ScalarSet.parse(text, from: index) {
                        tokens.append(.set(set))
                        index = end
                        continue
                    }
                    tokens.append(.scalar(scalar))
                default: tokens.append(.scalar(scalar))
                }
                index = next
            }
            return tokens
        }

        /// Whether `tokens` match all of `name`.
        /// The most matching steps one name may take.
        static let stepLimit = 200_000

        static func match(_ tokens: ArraySlice<Token>, _ name: ArraySlice<Unicode.Scalar>, _ budget: inout Int) -> Bool {
            budget -= 1
            guard budget >= 0 else { return false }
            guard let first = tokens.first else { return name.isEmpty }
            let rest = tokens.dropFirst()
            switch first {
            case .scalar(let scalar):
                guard name.first == scalar else { return false }
                return match(rest, name.dropFirst(), &budget)
            case .any:
                guard !name.isEmpty else { return false }
                return match(rest, name.dropFirst(), &budget)
            case .set(let set):
                guard let scalar = name.first, set.contains(scalar) else { return false }
                return match(rest, name.dropFirst(), &budget)
            case .star:
                if rest.isEmpty { return true }
                for start in name.startIndex...name.endIndex where match(rest, name[start...], &budget) { return true }
                return false
            case .extended(let kind, let alternatives):
                return matchExtended(kind, alternatives, rest, name, &budget)
            }
        }

        private static func matchExtended(_ kind: Character, _ alternatives: [[Token]], _ rest: ArraySlice<Token>,
                                          _ name: ArraySlice<Unicode.Scalar>, _ budget: inout Int) -> Bool {
            /// Whether one alternative matches exactly `piece`.
            func one(_ piece: ArraySlice<Unicode.Scalar>) -> Bool { alternatives.contains { match($0[...], piece, &budget) } }
            /// Whether `piece` is one or more alternatives in a row.
            func many(_ piece: ArraySlice<Unicode.Scalar>) -> Bool {
                if one(piece) { return true }
                guard piece.count > 1 else { return false }
                for cut in (piece.startIndex + 1)..<piece.endIndex where one(piece[..<cut]) && many(piece[cut...]) { return true }
                return false
            }
            let ends = Array(name.startIndex...name.endIndex)
            switch kind {
            case "@": return ends.contains { one(name[..<$0]) && match(rest, name[$0...], &budget) }
            case "?": return match(rest, name, &budget) || ends.contains { one(name[..<$0]) && match(rest, name[$0...], &budget) }
            case "*": return match(rest, name, &budget)
                || ends.contains { $0 > name.startIndex && many(name[..<$0]) && match(rest, name[$0...], &budget) }
            case "+": return ends.contains { $0 > name.startIndex && many(name[..<$0]) && match(rest, name[$0...], &budget) }
            default:
                // `!(a|b)REST`: the name does not begin with an alternative followed by REST, and
                // some part of it (any) is followed by REST.
                let excluded = ends.contains { one(name[..<$0]) && match(rest, name[$0...], &budget) }
                return !excluded && ends.contains { match(rest, name[$0...], &budget) }
            }
        }
    }

    /// `[...]`: scalars, ranges and POSIX classes, perhaps negated.
    private struct ScalarSet: Sendable {
        var negated = false
        var scalars: Set<Unicode.Scalar> = []
        var ranges: [ClosedRange<UInt32>] = []
        var classes: [String] = []

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            let inside = scalars.contains(scalar) || ranges.contains { $0.contains(scalar.value) }
                || classes.contains { Self.posix($0, scalar) }
            return inside != negated
        }

        static func posix(_ name: String, _ scalar: Unicode.Scalar) -> Bool {
            let properties = scalar.properties
            switch name {
            case "alnum": return properties.isAlphabetic || properties.numericType != nil
            case "alpha": return properties.isAlphabetic
            case "ascii": return scalar.isASCII
            case "blank": return scalar == " " || scalar == "\t"
            case "cntrl": return properties.generalCategory == .control
            case "digit": return ("0"..."9").contains(scalar)
            case "graph": return !properties.isWhitespace && properties.generalCategory != .control && scalar != " "
            case "lower": return properties.isLowercase
            case "print": return properties.generalCategory != .control
            case "punct": return [.connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                                  .initialPunctuation, .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol,
                                  .modifierSymbol, .otherSymbol].contains(properties.generalCategory) && scalar.isASCII
            case "space": return properties.isWhitespace
            case "upper": return properties.isUppercase
            case "word": return properties.isAlphabetic || properties.numericType != nil || scalar == "_"
            case "xdigit": return ("0"..."9").contains(scalar) || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar)
            default: return false
            }
        }

        /// The set opening at `open` and the index after its `]`; `nil` when it does not close.
        static func parse(_ text: ArraySlice<Unicode.Scalar>, from open: Int) -> (ScalarSet, Int)? {
            var set = ScalarSet()
            var index = open + 1
            if index < text.endIndex, text[index] == "!" || text[index] == "^" { set.negated = true; index += 1 }
            var first = true
            while index < text.endIndex {
                var scalar = text[index]
                if scalar == "]" && !first { return (set, index + 1) }
                first = false
                if scalar == "[", index + 1 < text.endIndex, text[index + 1] == ":" {
                    let rest = String(String.UnicodeScalarView(text[(index + 2)...]))
                    if let end = rest.range(of: ":]") {
                        set.classes.append(String(rest[..<end.lowerBound]))
                        index += 2 + rest.unicodeScalars.distance(from: rest.startIndex, to: end.upperBound)
                        continue
                    }
                }
                if scalar == "\\", index + 1 < text.endIndex { index += 1; scalar = text[index] }
                if index + 2 < text.endIndex, text[index + 1] == "-", text[index + 2] != "]" {
                    var upper = text[index + 2]
                    var end = index + 3
                    if upper == "\\", index + 3 < text.endIndex { upper = text[index + 3]; end += 1 }
                    if scalar.value <= upper.value { set.ranges.append(scalar.value...upper.value) }
                    index = end
                    continue
                }
                set.scalars.insert(scalar)
                index += 1
            }
            return nil
        }
    }

    // MARK: Braces

    /// `a{b,c}d` → `abd`, `acd`; `{1..3}` → 1, 2, 3 (with a step, `{1..9..2}`; zero-padded as
    /// written, `{01..10}`); `{a..e}` letters. A brace with neither a comma nor a sequence, and
    /// an escaped one, stays as written. Nested braces expand from the inside out.
    static func expandBraces(_ text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "\\" { index += 2; continue }
            if scalars[index] == "{", let (parts, end) = group(scalars[...], from: index, closing: "}", separator: ",") {
                let prefix = String(String.UnicodeScalarView(scalars[..<index]))
                let suffixes = expandBraces(String(String.UnicodeScalarView(scalars[end...])))
                if parts.count > 1 {
                    return parts.flatMap { part in
                        expandBraces(String(String.UnicodeScalarView(part))).flatMap { middle in suffixes.map { prefix + middle + $0 } }
                    }
                }
                if let sequence = sequence(String(String.UnicodeScalarView(parts[0]))) {
                    return sequence.flatMap { middle in suffixes.map { prefix + middle + $0 } }
                }
                // Not a brace set: the `{` stands as written; braces after it may still expand.
                return expandBraces(String(String.UnicodeScalarView(scalars[(index + 1)...]))).map { prefix + "{" + $0 }
            }
            index += 1
        }
        return [text]
    }

    /// The group opening at `open` (`(a|b)`, `{a,b}`) cut at its top-level `separator`s, and
    /// the index after its `closing`; `nil` when it does not close. A backslash escapes the
    /// character after it; groups of the same kind nest.
    static func group(_ text: ArraySlice<Unicode.Scalar>, from open: Int, closing: Unicode.Scalar,
                      separator: Unicode.Scalar) -> (parts: [ArraySlice<Unicode.Scalar>], end: Int)? {
        let opening = text[open]
        var depth = 0, index = open, start = open + 1
        var parts: [ArraySlice<Unicode.Scalar>] = []
        while index < text.endIndex {
            switch text[index] {
            case "\\": index += 1
            case opening: depth += 1
            case closing:
                depth -= 1
                if depth == 0 {
                    parts.append(text[start..<index])
                    return (parts, index + 1)
                }
            case separator where depth == 1:
                parts.append(text[start..<index])
                start = index + 1
            default: break
            }
            index += 1
        }
        return nil
    }

    private static func sequence(_ text: String) -> [String]? {
        let parts = text.components(separatedBy: "..")
        guard parts.count == 2 || parts.count == 3 else { return nil }
        let step = parts.count == 3 ? Int(parts[2]).map(abs) ?? 0 : 1
        guard step > 0 else { return nil }
        if let from = Int(parts[0]), let to = Int(parts[1]) {
            let width = [parts[0], parts[1]].contains { $0.hasPrefix("0") && $0.count > 1 || $0.hasPrefix("-0") }
                ? max(parts[0].count, parts[1].count) : 0
            let values = stride(from: from, through: to, by: from <= to ? step : -step)
            return values.map { value in
                let digits = String(abs(value))
                let padded = String(repeating: "0", count: max(0, width - digits.count - (value < 0 ? 1 : 0))) + digits
                return value < 0 ? "-" + padded : padded
            }
        }
        let ends = parts.prefix(2).map(\.unicodeScalars)
        guard ends.allSatisfy({ $0.count == 1 }), let from = ends[0].first?.value, let to = ends[1].first?.value else { return nil }
        return stride(from: Int(from), through: Int(to), by: from <= to ? step : -step).compactMap { Unicode.Scalar(UInt32($0)).map { String($0) } }
    }
}
