/// What happened to one host item given to an import.
public struct ImportResult: Sendable {
    /// The host path as the caller gave it.
    public var hostPath: String
    /// The imported item, or why it was not imported.
    public var outcome: Result<FileNode, CofferError>
    /// Items inside an imported folder that were left out.
    public var skipped: [ImportSkip]

    /// The result of importing `hostPath`.
    public init(hostPath: String, outcome: Result<FileNode, CofferError>, skipped: [ImportSkip] = []) {
        (self.hostPath, self.outcome, self.skipped) = (hostPath, outcome, skipped)
    }
}

/// An entry inside an imported host folder that was left out, and why.
public struct ImportSkip: Sendable {
    /// Its host path.
    public var hostPath: String
    /// Why it was left out.
    public var error: CofferError

    /// The entry at `hostPath`, left out because of `error`.
    public init(hostPath: String, error: CofferError) { (self.hostPath, self.error) = (hostPath, error) }
}
