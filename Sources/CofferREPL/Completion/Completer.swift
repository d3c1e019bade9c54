public import CofferCore

/// An item offered for completion.
public struct CompletionEntry: Sendable, Equatable {
    public var name: String
    /// Folders (and packages) are completed with a trailing `/` and stay open for more.
    public var isFolder: Bool

    public init(name: String, isFolder: Bool) {
        self.name = name
        self.isFolder = isFolder
    }
}

/// Where completion finds names. The REPL's source asks the `FileService`; tests use a
/// fixed table.
public protocol CompletionSource: Sendable {
    /// The items of a sandbox folder; empty when it cannot be listed.
    func sandboxEntries(in folder: VirtualPath, includeHidden: Bool) -> [CompletionEntry]
    /// The items of a host folder (an absolute path); empty when it cannot be listed.
    func hostEntries(inDirectory path: String) -> [CompletionEntry]
    /// The names of the mounts a path may start with (`files`, `trash`).
    var mountNames: [String] { get }
    /// The folder `~` stands for in host paths.
    var homeDirectory: String? { get }
    /// Favourite folders of the mounts (virtual paths), offered first where a folder is asked for.
    var favouriteFolders: [String] { get }
}

extension CompletionSource {
    public var favouriteFolders: [String] { [] }
}

/// What pressing Tab does to a line.
public struct Completion: Sendable, Equatable {
    /// Where the word being completed starts, in UTF-8 bytes.
    public var start: Int
    /// The text to put in place of everything from `start` to the cursor; `nil` when
    /// completion can add nothing (no match, or several that share no longer prefix).
    public var replacement: String?
    /// What matched, as shown in a list (folders end in `/`); sorted.
    public var candidates: [String]

    public init(start: Int, replacement: String?, candidates: [String]) {
        self.start = start
        self.replacement = replacement
        self.candidates = candidates
    }
}

/// Tab completion for REPL lines: command names, flags, sandbox paths relative to the
/// current folder, mount names and host paths, each where the command's syntax expects it.
///
/// A completed word is written so that the line still parses: names with spaces, quotes
/// or non-ASCII characters are quoted (in the quote the user opened, else in `'…'`).
/// A file or command is closed and followed by a space; a folder is closed after its `/`
/// with no space, so Enter runs the line and typing on continues the same word
/// (`'My Notes/'Sub` reads as `My Notes/Sub`). A common prefix of several matches is
/// left open for the next letters.
public struct Completer: Sendable {
    public var currentFolder: VirtualPath
    public var source: any CompletionSource
    /// The commands known, by name (aliases included).
    public var syntax: @Sendable (String) -> CommandSyntax?

    public init(currentFolder: VirtualPath, source: any CompletionSource,
                syntax: @escaping @Sendable (String) -> CommandSyntax? = { CommandHelp.named($0)?.syntax }) {
        self.currentFolder = currentFolder
        self.source = source
        self.syntax = syntax
    }

    /// Completes the word that ends at the end of `prefix` (the line up to the cursor).
    public func complete(_ prefix: String) -> Completion {
        let scan = CommandLineSplitter.scan(prefix)
        let end = prefix.utf8.count
        guard !scan.endsInComment else { return Completion(start: end, replacement: nil, candidates: []) }
        var words = scan.commands.last ?? []
        let current = scan.endsInWord ? words.removeLast() : CommandLineSplitter.Word(text: "", start: end)
        let typed = current.text
        let matches = candidates(for: typed, after: words.map(\.text))
        return Self.completion(of: typed, at: current.start, quote: scan.endsInWord ? scan.openQuote : nil,
                               matches: matches)
    }

    /// A possible completion: the whole word, and whether it is finished (a file or a
    /// command, after which a space follows).
    struct Match: Equatable {
        var word: String
        var display: String
        var isFinal: Bool
        /// Favourites come first (0), then everything else (1).
        var rank = 1
    }

    private func candidates(for typed: String, after words: [String]) -> [Match] {
        guard let command = words.first else { return matches(typed, kind: .command) }
        guard let syntax = syntax(command) else { return [] }
        var operandIndex = 0
        var valueKind: CommandSyntax.Operand?
        var flagsEnded = false
        for word in words.dropFirst() {
            if valueKind != nil {
                valueKind = nil  // this word is the option's value
            } else if !flagsEnded && word == "--" {
                flagsEnded = true
            } else if !flagsEnded && word.hasPrefix("-") && word != "-" {
                valueKind = syntax.valueKind(after: word)
            } else {
                operandIndex += 1
            }
        }
        if let valueKind { return matches(typed, kind: valueKind) }
        if !flagsEnded && typed.hasPrefix("-") {
            return syntax.flagWords.filter { $0.hasPrefix(typed) }.map { Match(word: $0, display: $0, isFinal: true) }
        }
        guard let kind = syntax.operand(at: operandIndex) else { return [] }
        return matches(typed, kind: kind)
    }

    private func matches(_ typed: String, kind: CommandSyntax.Operand) -> [Match] {
        switch kind {
        case .command:
            return CommandHelp.commandNames.filter { $0.hasPrefix(typed) }.map { Match(word: $0, display: $0, isFinal: true) }
        case .sandboxPath:
            return sandboxMatches(typed, foldersOnly: false)
        case .sandboxFolder:
            let favourites = source.favouriteFolders.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
                .filter { $0.hasPrefix(typed) && $0 != typed }
                .map { Match(word: $0, display: $0, isFinal: false, rank: 0) }
            let entries = sandboxMatches(typed, foldersOnly: true)
            return favourites + entries.filter { entry in !favourites.contains { $0.word == entry.word } }
        case .hostPath:
            return hostMatches(typed)
        case .trashItem:
            let entries = source.sandboxEntries(in: .root(of: "trash"), includeHidden: typed.hasPrefix("."))
            return entries.filter { $0.name.hasPrefix(typed) }.map { Match(word: $0.name, display: $0.name, isFinal: true) }
        case .text:
            return []
        }
    }

    private func sandboxMatches(_ typed: String, foldersOnly: Bool) -> [Match] {
        let (folderPart, namePrefix) = Self.splitLast(typed)
        var matches: [Match] = []
        if !typed.contains("/") {
            for mount in source.mountNames where "\(mount):/".hasPrefix(typed) && !typed.isEmpty {
                matches.append(Match(word: "\(mount):/", display: "\(mount):/", isFinal: false))
            }
            if typed.contains(":") { return matches }
        }
        guard let folder = try? VirtualPath(parsing: folderPart.isEmpty ? "." : folderPart, relativeTo: currentFolder)
        else { return matches }
        let entries = source.sandboxEntries(in: folder, includeHidden: namePrefix.hasPrefix("."))
        return matches + Self.entryMatches(entries, folderPart: folderPart, namePrefix: namePrefix, foldersOnly: foldersOnly)
    }

    private func hostMatches(_ typed: String) -> [Match] {
        let (folderPart, namePrefix) = Self.splitLast(typed)
        var directory = folderPart.isEmpty ? "." : folderPart
        if directory == "~/" || directory.hasPrefix("~/") {
            guard let home = source.homeDirectory else { return [] }
            directory = home + directory.dropFirst()
        } else if typed == "~" {
            return [Match(word: "~/", display: "~/", isFinal: false)]
        }
        let entries = source.hostEntries(inDirectory: directory).filter {
            namePrefix.hasPrefix(".") || !$0.name.hasPrefix(".")
        }
        return Self.entryMatches(entries, folderPart: folderPart, namePrefix: namePrefix, foldersOnly: false)
    }

    /// Entries whose names start with `namePrefix` (ignoring case when nothing matches exactly).
    private static func entryMatches(_ entries: [CompletionEntry], folderPart: String, namePrefix: String,
                                     foldersOnly: Bool) -> [Match] {
        let eligible = entries.filter { !foldersOnly || $0.isFolder }
        var chosen = eligible.filter { $0.name.hasPrefix(namePrefix) }
        if chosen.isEmpty && !namePrefix.isEmpty {
            let lowered = namePrefix.lowercased()
            chosen = eligible.filter { $0.name.lowercased().hasPrefix(lowered) }
        }
        return chosen.map { entry in
            let suffix = entry.isFolder ? "/" : ""
            return Match(word: folderPart + entry.name + suffix, display: entry.name + suffix, isFinal: !entry.isFolder)
        }
    }

    /// `("a/b/", "c")` for `a/b/c`; `("", "c")` for `c`.
    static func splitLast(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }

    /// Turns the matches for `typed` into what Tab does.
    static func completion(of typed: String, at start: Int, quote: Character?, matches: [Match]) -> Completion {
        let sorted = matches.map { (NaturalSortKey($0.display), $0) }
            .sorted { $0.1.rank != $1.1.rank ? $0.1.rank < $1.1.rank : $0.0 < $1.0 }.map(\.1)
        let candidates = sorted.map(\.display)
        if sorted.count == 1, let only = sorted.first {
            return Completion(start: start, replacement: written(only.word, quote: quote, closed: true,
                                                                   space: only.isFinal),
                              candidates: candidates)
        }
        guard let first = sorted.first else { return Completion(start: start, replacement: nil, candidates: []) }
        var common = first.word
        for match in sorted.dropFirst() {
            common = String(common.sharedPrefix(with: match.word))
        }
        let extends = common != typed && common.count >= typed.count
        return Completion(start: start,
                          replacement: extends ? written(common, quote: quote, closed: false, space: false) : nil,
                          candidates: candidates)
    }

    /// `word` as it goes on the line: bare when safe, else quoted (in `quote` if the user
    /// opened one); `closed` adds the closing quote, `space` a space after.
    static func written(_ word: String, quote: Character?, closed: Bool, space: Bool) -> String {
        let suffix = space ? " " : ""
        if let quote { return CommandLineSplitter.quoted(word, with: quote, closed: closed) + suffix }
        if CommandLineSplitter.isSafeUnquoted(word) || word.isEmpty { return word + suffix }
        return CommandLineSplitter.quoted(word, with: "'", closed: closed) + suffix
    }
}

private extension String {
    /// The longest common prefix, by characters.
    func sharedPrefix(with other: String) -> Substring {
        var end = startIndex
        var otherIndex = other.startIndex
        while end < endIndex, otherIndex < other.endIndex, self[end] == other[otherIndex] {
            end = index(after: end)
            otherIndex = other.index(after: otherIndex)
        }
        return self[..<end]
    }
}
