public import CofferCore

/// How an operation that puts an item somewhere handles a name already taken: a
/// `ConflictPolicy`, or `ask`.
public enum ConflictChoice: Sendable, Hashable {
    /// Settle it as the policy says, without asking (``fail``, ``keepBoth``, ``replace``,
    /// ``replaceFolder``).
    case policy(ConflictPolicy)
    /// Try without overwriting; if the name is taken, ask the session's
    /// ``Session/conflictQuestion`` and try again with its answer. A session with no one to
    /// ask fails with `fileExists`, as `.fail` does; no answer cancels.
    case ask

    /// Fail with `fileExists`; nothing is overwritten.
    public static let fail = ConflictChoice.policy(.fail)
    /// Keep both: the newcomer takes the first free name (`report (2).pdf`).
    public static let keepBoth = ConflictChoice.policy(.keepBoth)
    /// Put the newcomer in the old item's place, the old one moved to the trash: only an
    /// item of the same sort (a file by a file, a folder by a folder).
    public static let replace = ConflictChoice.policy(.replace)
    /// As ``replace``, and also a folder by a file or a file by a folder.
    public static let replaceFolder = ConflictChoice.policy(.replaceFolder)

    /// The choice a request names: a `ConflictPolicy`'s raw value (`fail`, `keepBoth`,
    /// `replace`, `replaceFolder`) or `ask`; `nil` for any other name.
    public init?(name: String) {
        if name == "ask" {
            self = .ask
        } else if let policy = ConflictPolicy(rawValue: name) {
            self = .policy(policy)
        } else {
            return nil
        }
    }

    /// Its name, as ``init(name:)`` reads it.
    public var name: String {
        switch self {
        case .ask: "ask"
        case .policy(let policy): policy.rawValue
        }
    }
}

/// Asked when a name is taken under ``ConflictChoice/ask``: the policy to try again with,
/// or `nil` to cancel. It is told what is in the way, so that whoever answers knows what a
/// replace would move to the trash.
public typealias ConflictQuestion = @Sendable (_ conflict: NameConflict) async -> ConflictPolicy?

/// A name found taken: where, and what is there.
public struct NameConflict: Sendable {
    /// The name asked for.
    public var destination: VirtualPath
    /// What is there now; `nil` when it could not be read (gone again, say).
    public var existing: FileNode?
    /// For a folder, what it holds (all levels); `nil` for a file or when it could not be measured.
    public var contents: DiskUsage?

    /// A conflict at `destination`, with what is known of what is there.
    public init(destination: VirtualPath, existing: FileNode? = nil, contents: DiskUsage? = nil) {
        self.destination = destination
        self.existing = existing
        self.contents = contents
    }

    /// “notes.txt” (a file, 12 KB) already exists in files:/Docs. — what every front end's
    /// question starts with.
    public func sentence(in language: Language) -> String {
        let folder = destination.parent?.description ?? destination.mount + ":/"
        let what: LocalizedText
        switch (existing, contents) {
        case (let node?, let usage?) where node.kind != .file:
            let count = usage.files + usage.folders
            what = LocalizedText("a folder with \(count) item\(count == 1 ? "" : "s"), \(SizeText.decimal(usage.bytes))",
                                 "文件夹，含 \(count) 个项目，\(SizeText.decimal(usage.bytes))")
        case (let node?, _) where node.kind != .file:
            what = LocalizedText("a folder", "文件夹")
        case (let node?, _):
            what = LocalizedText("a file, \(SizeText.decimal(node.size))", "文件，\(SizeText.decimal(node.size))")
        case (nil, _):
            what = LocalizedText("an item", "项目")
        }
        return LocalizedText("“\(destination.name)” (\(what(.english))) already exists in \(folder).",
                             "“\(destination.name)”（\(what(.simplifiedChinese))）已存在于 \(folder)。")(language)
    }

    /// Where replacing puts what is there, for the question's choice: a file is kept as a
    /// version of itself (in the trash only when a folder takes its place), anything else goes
    /// to the trash.
    public func whatReplacingKeeps(in language: Language) -> String {
        guard existing?.kind == .file else { return LocalizedText("it goes to the trash", "原项目移到废纸篓")(language) }
        return LocalizedText("it is kept as a version", "原文件保留为历史版本")(language)
    }

    /// What is at `destination` now, measured through `service`.
    static func found(at destination: VirtualPath, in service: FileService) async -> NameConflict {
        let existing = try? await service.stat(destination)
        var contents: DiskUsage?
        if let existing, existing.kind != .file { contents = try? await service.diskUsage(destination) }
        return NameConflict(destination: destination, existing: existing, contents: contents)
    }
}
