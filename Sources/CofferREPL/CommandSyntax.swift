/// What the words of a command may be: its flags, its options with values, and what
/// each operand names. One description serves the parser and tab completion.
public struct CommandSyntax: Sendable {
    /// What a word names, so completion knows where to look.
    public enum Operand: Sendable, Equatable {
        /// A path in the sandbox (any mount), relative to the current folder.
        case sandboxPath
        /// Like `sandboxPath`, but only folders are offered.
        case sandboxFolder
        /// A path on the host machine.
        case hostPath
        /// A command name (for `help`).
        case command
        /// The name of an item in the trash (for `restore`).
        case trashItem
        /// Free text: a new name, a number, a pattern. Nothing is offered.
        case text
    }

    /// Single-letter flags without values, as one string (`"laStr"`).
    public var shortFlags: String
    /// Single-letter options that take a value (`-L 2`).
    public var shortOptions: [Character: Operand]
    /// `--name` flags without values.
    public var longFlags: [String]
    /// `--name VALUE` (or `--name=VALUE`) options.
    public var longOptions: [String: Operand]
    /// What each operand is; the last entry repeats. Empty: the command takes none.
    public var operands: [Operand]

    public init(shortFlags: String = "", shortOptions: [Character: Operand] = [:], longFlags: [String] = [],
                longOptions: [String: Operand] = [:], operands: [Operand] = []) {
        self.shortFlags = shortFlags
        self.shortOptions = shortOptions
        self.longFlags = longFlags
        self.longOptions = longOptions
        self.operands = operands
    }

    /// What the operand at `index` names, or `nil` when the command takes no more.
    public func operand(at index: Int) -> Operand? {
        guard let last = operands.last else { return nil }
        return index < operands.count ? operands[index] : last
    }

    /// Every flag and option as typed (`-l`, `-L`, `--keep-both`), short ones first.
    public var flagWords: [String] {
        shortFlags.map { "-\($0)" } + shortOptions.keys.sorted().map { "-\($0)" }
            + (longFlags + longOptions.keys.sorted()).map { "--\($0)" }
    }

    /// The operand kind of the value that follows `word`, if `word` is an option that takes one.
    func valueKind(after word: String) -> Operand? {
        if word.hasPrefix("--") {
            let name = word.dropFirst(2)
            return name.contains("=") ? nil : longOptions[String(name)]
        }
        guard word.hasPrefix("-"), word.count >= 2 else { return nil }
        // In a group like `-aL`, only a value option at the end takes the next word.
        guard let last = word.last, let kind = shortOptions[last] else { return nil }
        let before = word.dropFirst().dropLast()
        return before.allSatisfy { shortFlags.contains($0) } ? kind : nil
    }
}
