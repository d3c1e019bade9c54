import Foundation

/// A glob pattern, in one of the dialects clients send, matched at a bounded cost.
///
/// Every pattern a client sends goes through here — MCP's `search_files` and `excludePatterns`
/// (``Syntax/minimatch``), the REPL's wildcards (``Syntax/shell``), content search's exclusions
/// (``Syntax/fnmatch``) — so that none can make Coffer run or grow without end:
/// - brace sets are matched where they stand, not expanded: `{1..99999999}` is a range
///   checked against the digits of a name, `{a,b}` a choice between two patterns. Only a set
///   whose choices hold a `/` or a `**` (which change how the path is cut into segments) is
///   expanded, as minimatch does, and then at most ``maximumExpansions`` times, else the
///   pattern is refused (`invalidArgument`, detail `pattern-too-large`);
/// - one name costs at most ``stepLimit`` matching steps, whatever the pattern: a pathological
///   one (`+(a|aa)b`, `*a*a*a*a*b`) stops matching instead of backtracking for minutes;
/// - a pattern longer than ``maximumLength`` is refused.
///
/// Making one costs time in proportion to its text; matching is bounded per name, so a walk
/// that checks for cancellation between names stops promptly.
public struct Glob: Sendable {
    /// What a pattern's characters mean.
    public struct Syntax: Sendable, Hashable {
        /// `{a,b}`, `{1..9}`, `{a..z}`, `{01..10..2}`.
        public var braces: Bool
        /// `@(a|b)`, `?(…)`, `*(…)`, `+(…)`, `!(…)`.
        public var extended: Bool
        /// `/` separates segments that `*`, `?` and sets never cross, and `**` alone is any number
        /// of segments; without it, the whole text is one string and `*` matches `/` too.
        public var segments: Bool
        /// A name starting with `.` is matched only by a pattern that starts with one
        /// (`FNM_PERIOD`); else dot-names match like any other (minimatch's `dot: true`).
        public var explicitDot: Bool
        /// A leading `!` matches what the rest does not, a leading `#` nothing.
        public var negation: Bool

        /// A dialect with these features.
        public init(braces: Bool, extended: Bool, segments: Bool, explicitDot: Bool, negation: Bool) {
            self.braces = braces
            self.extended = extended
            self.segments = segments
            self.explicitDot = explicitDot
            self.negation = negation
        }

        /// The reference filesystem server's: `minimatch(path, pattern, {dot: true})`.
        public static let minimatch = Syntax(braces: true, extended: true, segments: true, explicitDot: false, negation: true)
        /// The sftp shell's wildcards, one name at a time: `*`, `?`, `[…]`, and a leading dot
        /// only matched by a dot.
        public static let shell = Syntax(braces: false, extended: false, segments: true, explicitDot: true, negation: false)
        /// `fnmatch(3)` with no flags: `*`, `?` and sets match `/` too.
        public static let fnmatch = Syntax(braces: false, extended: false, segments: false, explicitDot: false, negation: false)
    }

    /// The most patterns brace sets holding `/` or `**` may expand to.
    public static let maximumExpansions = 1_000
    /// The longest pattern, in Unicode scalars (a letter with 200,000 combining marks is one
    /// character but 200,001 scalars); the patterns braces expand to may hold 64 times that
    /// in all.
    public static let maximumLength = 4_096
    /// The most matching steps one name may take; past it, the name does not match.
    public static let stepLimit = 200_000

    /// The pattern as given.
    public let source: String
    /// The dialect the pattern was read in.
    public let syntax: Syntax
    private let alternatives: [[Segment]]
    private let negated: Bool
    private let comment: Bool

    /// Reads `pattern` in `syntax`.
    /// - Throws: `invalidArgument` (detail `pattern-too-large`) for a pattern longer than
    ///   ``maximumLength`` or whose brace sets expand past ``maximumExpansions``.
    public init(_ pattern: String, syntax: Syntax) throws(CofferError) {
        guard pattern.unicodeScalars.count <= Self.maximumLength else {
            throw CofferError(.invalidArgument, detail: Self.tooLarge)
        }
        source = pattern
        self.syntax = syntax
        var text = Substring(pattern)
        var negated = false
        if syntax.negation {
            while text.first == "!" && text.dropFirst().first != "(" {
                negated.toggle()
                text = text.dropFirst()
            }
        }
        self.negated = negated
        comment = syntax.negation && text.first == "#"
        let expanded = syntax.braces ? try Self.expandStructuralBraces(String(text)) : [String(text)]
        alternatives = expanded.map { pattern in
            let parts = syntax.segments ? Self.split(pattern) : [pattern]
            return parts.map { Segment($0, syntax: syntax) }
        }
    }

    /// The detail of the error for a pattern too large to match.
    public static let tooLarge = "pattern-too-large"

    /// Whether `path` matches: for ``Syntax/segments``, a relative `/`-separated path.
    public func matches(_ path: String) -> Bool {
        guard !comment else { return false }
        var budget = Self.stepLimit
        let found: Bool
        if syntax.segments {
            let parts = Self.split(path)[...]
            found = alternatives.contains { Self.match($0[...], parts, syntax, &budget) }
        } else {
            found = alternatives.contains { $0.first?.matches(path, syntax, &budget) ?? path.isEmpty }
        }
        // A name that cost more than its steps does not match, negated or not.
        guard budget >= 0 else { return false }
        return found != negated
    }

    /// Whether `text` holds anything a glob reads specially (`*`, `?`, `[`, and in this syntax
    /// `{` or an extended group), unescaped.
    public static func hasWildcard(_ text: String, syntax: Syntax = .shell) -> Bool {
        var escaped = false
        for scalar in text.unicodeScalars {
            if escaped { escaped = false; continue }
            switch scalar {
            case "\\": escaped = true
            case "*", "?", "[": return true
            case "{" where syntax.braces: return true
            default: break
            }
        }
        return false
    }

    // MARK: Segments

    private static func split(_ text: String) -> [String] {
        text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    private static func match(_ pattern: ArraySlice<Segment>, _ file: ArraySlice<String>, _ syntax: Syntax,
                              _ budget: inout Int) -> Bool {
        budget -= 1
        guard budget >= 0 else { return false }
        guard let first = pattern.first else { return file.isEmpty }
        if case .globstar = first {
            let rest = pattern.dropFirst()
            if rest.isEmpty { return !file.isEmpty && file.allSatisfy { $0 != "." && $0 != ".." } }
            var start = file.startIndex
            while start < file.endIndex {
                if match(rest, file[start...], syntax, &budget) { return true }
                if file[start] == "." || file[start] == ".." { return false }
                start += 1
            }
            return false
        }
        guard let name = file.first, first.matches(name, syntax, &budget) else { return false }
        return match(pattern.dropFirst(), file.dropFirst(), syntax, &budget)
    }

    private enum Segment: Sendable {
        case globstar
        case literal(String)
        case pattern([Token])

        init(_ text: String, syntax: Syntax) {
            if syntax.segments && text == "**" { self = .globstar; return }
            let tokens = Token.parse(Array(text.unicodeScalars)[...], syntax)
            if tokens.allSatisfy({ if case .scalar = $0 { true } else { false } }) {
                self = .literal(String(String.UnicodeScalarView(tokens.compactMap { if case .scalar(let s) = $0 { s } else { nil } })))
            } else {
                self = .pattern(tokens)
            }
        }

        func matches(_ name: String, _ syntax: Syntax, _ budget: inout Int) -> Bool {
            switch self {
            case .globstar: return true
            // Compared as scalars, as every other part is (and as minimatch compares code units):
            // an NFC name and an NFD one are different names.
            case .literal(let text): return text.unicodeScalars.elementsEqual(name.unicodeScalars)
            case .pattern(let tokens):
                if syntax.segments {
                    // Never `.` or `..`, and never an empty segment.
                    guard !name.isEmpty, name != ".", name != ".." else { return false }
                }
                if syntax.explicitDot, name.hasPrefix("."), !Token.startsWithDot(tokens) { return false }
                return Token.match(tokens[...], Array(name.unicodeScalars)[...], syntax, &budget)
            }
        }
    }

    // MARK: Tokens of one segment

    private indirect enum Token: Sendable {
        case scalar(Unicode.Scalar)
        case any
        case star
        case set(ScalarSet)
        /// `@ ? * + !` followed by alternatives in parentheses; a brace set `{a,b}` is an `@`.
        case extended(Character, [[Token]])
        /// A brace sequence, `{1..9}` or `{a..e..2}`, matched without being expanded.
        case sequence(BraceSequence)

        static func parse(_ text: ArraySlice<Unicode.Scalar>, _ syntax: Syntax) -> [Token] {
            var tokens: [Token] = []
            var index = text.startIndex
            while index < text.endIndex {
                let scalar = text[index]
                let next = text.index(after: index)
                if syntax.extended, "@?*+!".unicodeScalars.contains(scalar), next < text.endIndex, text[next] == "(",
                   let (alternatives, end) = Glob.group(text, from: next, closing: ")", separator: "|") {
                    tokens.append(.extended(Character(scalar), alternatives.map { parse($0, syntax) }))
                    index = end
                    continue
                }
                if syntax.braces, scalar == "{", let (parts, end) = Glob.group(text, from: index, closing: "}", separator: ",") {
                    if parts.count > 1 {
                        tokens.append(.extended("@", parts.map { parse($0, syntax) }))
                        index = end
                        continue
                    }
                    if let sequence = BraceSequence(String(String.UnicodeScalarView(parts[0]))) {
                        tokens.append(.sequence(sequence))
                        index = end
                        continue
                    }
                    // Not a brace set: the `{` stands as written; braces after it may still be sets.
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

        /// Whether a pattern starting with `tokens` can only match a name that starts with `.`
        /// written out (what `FNM_PERIOD` asks of a dot-name's pattern).
        static func startsWithDot(_ tokens: [Token]) -> Bool {
            if case .scalar(".")? = tokens.first { return true }
            return false
        }

        /// Whether `tokens` match all of `name`.
        static func match(_ tokens: ArraySlice<Token>, _ name: ArraySlice<Unicode.Scalar>, _ syntax: Syntax,
                          _ budget: inout Int) -> Bool {
            budget -= 1
            guard budget >= 0 else { return false }
            guard let first = tokens.first else { return name.isEmpty }
            let rest = tokens.dropFirst()
            switch first {
            case .scalar(let scalar):
                guard name.first == scalar else { return false }
                return match(rest, name.dropFirst(), syntax, &budget)
            case .any:
                guard !name.isEmpty else { return false }
                return match(rest, name.dropFirst(), syntax, &budget)
            case .set(let set):
                guard let scalar = name.first, set.contains(scalar) else { return false }
                return match(rest, name.dropFirst(), syntax, &budget)
            case .star:
                if rest.isEmpty { return true }
                for start in name.startIndex...name.endIndex where match(rest, name[start...], syntax, &budget) { return true }
                return false
            case .sequence(let sequence):
                for length in sequence.lengths(available: name.count) {
                    let end = name.startIndex + length
                    if sequence.contains(name[..<end]) && match(rest, name[end...], syntax, &budget) { return true }
                    if budget < 0 { return false }
                }
                return false
            case .extended(let kind, let alternatives):
                return matchExtended(kind, alternatives, rest, name, syntax, &budget)
            }
        }

        private static func matchExtended(_ kind: Character, _ alternatives: [[Token]], _ rest: ArraySlice<Token>,
                                          _ name: ArraySlice<Unicode.Scalar>, _ syntax: Syntax, _ budget: inout Int) -> Bool {
            /// Whether one alternative matches exactly `piece`.
            func one(_ piece: ArraySlice<Unicode.Scalar>) -> Bool {
                alternatives.contains { match($0[...], piece, syntax, &budget) }
            }
            /// Whether `piece` is one or more alternatives in a row.
            func many(_ piece: ArraySlice<Unicode.Scalar>) -> Bool {
                if one(piece) { return true }
                guard piece.count > 1 else { return false }
                for cut in (piece.startIndex + 1)..<piece.endIndex where one(piece[..<cut]) && many(piece[cut...]) { return true }
                return false
            }
            let ends = name.startIndex...name.endIndex
            switch kind {
            case "@": return ends.contains { one(name[..<$0]) && match(rest, name[$0...], syntax, &budget) }
            case "?": return match(rest, name, syntax, &budget)
                || ends.contains { one(name[..<$0]) && match(rest, name[$0...], syntax, &budget) }
            case "*": return match(rest, name, syntax, &budget)
                || ends.contains { $0 > name.startIndex && many(name[..<$0]) && match(rest, name[$0...], syntax, &budget) }
            case "+": return ends.contains { $0 > name.startIndex && many(name[..<$0]) && match(rest, name[$0...], syntax, &budget) }
            default:
                // `!(a|b)REST`: the name does not begin with an alternative followed by REST, and
                // some part of it (any) is followed by REST.
                let excluded = ends.contains { one(name[..<$0]) && match(rest, name[$0...], syntax, &budget) }
                return !excluded && ends.contains { match(rest, name[$0...], syntax, &budget) }
            }
        }
    }

    // MARK: Braces

    /// `{1..3}`, `{3..1}`, `{01..10..2}`, `{-2..2}`, `{a..e}`, `{z..a..2}`: what it stands for,
    /// without listing it. Numbers are written as brace expansion writes them: zero-padded to
    /// the wider end when either end is written with a leading zero, else plainly.
    struct BraceSequence: Sendable {
        enum Ends: Sendable {
            case numbers(from: Int, to: Int, width: Int)
            case characters(from: UInt32, to: UInt32)
        }
        let ends: Ends
        let step: Int

        /// As brace expansion reads one: two integers (`-?[0-9]+`) or two ASCII letters, and
        /// perhaps a step (an integer); anything else is no sequence, and stays as written.
        init?(_ text: String) {
            let parts = text.components(separatedBy: "..")
            guard parts.count == 2 || parts.count == 3 else { return nil }
            // A step is its size, whichever its sign; zero or not a number is no sequence.
            guard let step = parts.count == 3 ? Self.integer(parts[2]).map({ $0.magnitude }).flatMap({ Int(exactly: $0) }) : 1,
                  step > 0 else { return nil }
            self.step = step
            if let from = Self.integer(parts[0]), let to = Self.integer(parts[1]) {
                // Padded when an end is written with a leading zero before another digit (`01`, `-05`).
                let padded = [parts[0], parts[1]].contains { end in
                    let digits = end.hasPrefix("-") ? end.dropFirst() : Substring(end)
                    return digits.count > 1 && digits.hasPrefix("0")
                }
                ends = .numbers(from: from, to: to, width: padded ? max(parts[0].count, parts[1].count) : 0)
                return
            }
            let scalars = parts.prefix(2).map(\.unicodeScalars)
            guard scalars.allSatisfy({ $0.count == 1 && $0.first!.isASCII && $0.first!.properties.isAlphabetic }),
                  let from = scalars[0].first?.value, let to = scalars[1].first?.value
            else { return nil }
            ends = .characters(from: from, to: to)
        }

        /// `-?[0-9]+` as an `Int` (no `+`, no spaces); `nil` otherwise, or past `Int`'s range.
        private static func integer(_ text: String) -> Int? {
            let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
            guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
            return Int(text)
        }

        /// The lengths a member may have, longest first, within `available` characters.
        func lengths(available: Int) -> [Int] {
            switch ends {
            case .characters: return available >= 1 ? [1] : []
            case .numbers(let from, let to, let width):
                let longest = max(Self.written(from, width: width).count, Self.written(to, width: width).count, width)
                return Array((1...max(1, min(longest, available))).reversed()).filter { $0 <= available }
            }
        }

        /// Whether `text` is one of the sequence's members, exactly as expansion writes it.
        func contains(_ text: ArraySlice<Unicode.Scalar>) -> Bool {
            switch ends {
            case .characters(let from, let to):
                guard text.count == 1, let value = text.first?.value else { return false }
                guard (min(from, to)...max(from, to)).contains(value) else { return false }
                return abs(Int(value) - Int(from)) % step == 0
            case .numbers(let from, let to, let width):
                let string = String(String.UnicodeScalarView(text))
                guard let value = Int(string), Self.written(value, width: width) == string,
                      (min(from, to)...max(from, to)).contains(value) else { return false }
                let (offset, overflow) = value.subtractingReportingOverflow(from)
                return !overflow && offset.magnitude % UInt(step) == 0
            }
        }

        /// A member as brace expansion writes it.
        static func written(_ value: Int, width: Int) -> String {
            let digits = String(value.magnitude)
            let padding = String(repeating: "0", count: max(0, width - digits.count - (value < 0 ? 1 : 0)))
            return (value < 0 ? "-" : "") + padding + digits
        }
    }

    /// Expands the brace sets whose choices hold a `/` or a `**` (they decide how the path is
    /// cut into segments, so they cannot be matched within one); every other set is left in
    /// the text, to be matched where it stands.
    /// - Throws: `invalidArgument` (``tooLarge``) past ``maximumExpansions`` patterns.
    static func expandStructuralBraces(_ text: String) throws(CofferError) -> [String] {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "\\" { index += 2; continue }
            if scalars[index] == "{", let (parts, end) = group(scalars[...], from: index, closing: "}", separator: ",") {
                let structural = parts.count > 1 && parts.contains { part in
                    let text = String(String.UnicodeScalarView(part))
                    return text.contains("/") || text.contains("**")
                }
                guard structural else {
                    index = end
                    continue
                }
                let prefix = String(String.UnicodeScalarView(scalars[..<index]))
                let suffixes = try expandStructuralBraces(String(String.UnicodeScalarView(scalars[end...])))
                var middles: [String] = []
                for part in parts {
                    middles += try expandStructuralBraces(String(String.UnicodeScalarView(part)))
                    guard middles.count <= maximumExpansions else { throw CofferError(.invalidArgument, detail: tooLarge) }
                }
                guard middles.count * suffixes.count <= maximumExpansions else {
                    throw CofferError(.invalidArgument, detail: tooLarge)
                }
                // What the patterns hold in all is bounded too, not only how many there are.
                let prefixLength = prefix.unicodeScalars.count
                let total = middles.reduce(0) { $0 + $1.unicodeScalars.count + prefixLength } * suffixes.count
                    + suffixes.reduce(0) { $0 + $1.unicodeScalars.count } * middles.count
                guard total <= maximumLength * 64 else { throw CofferError(.invalidArgument, detail: tooLarge) }
                return middles.flatMap { middle in suffixes.map { prefix + middle + $0 } }
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
}
