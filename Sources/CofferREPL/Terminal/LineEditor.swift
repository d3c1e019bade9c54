/// What reading a line gave.
public enum LineInput: Sendable, Equatable {
    case line(String)
    /// Ctrl-D on an empty line, or the end of input.
    case endOfInput
    /// Ctrl-C, when the read was interruptible.
    case interrupted
}

/// Reads lines from a person at a terminal.
public protocol LineEditor: AnyObject, Sendable {
    /// Shows `prompt` and reads one line. With `completion`, Tab completes the text before
    /// the cursor. Ctrl-C clears the line and reads on, unless `interruptible`: then it
    /// ends the read with `.interrupted`.
    func readLine(prompt: String, completion: (@Sendable (String) -> Completion)?,
                  interruptible: Bool) async -> LineInput

    /// Makes `line` reachable with the up arrow.
    func addToHistory(_ line: String)

    /// Ctrl-C arrived. Returns whether a read in progress took it.
    func interrupt() -> Bool

    /// The program must end (SIGTERM, SIGHUP): a read in progress ends with `.endOfInput`,
    /// leaving the terminal as it found it. Returns whether a read was in progress.
    func endInput() -> Bool
}
