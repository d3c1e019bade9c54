/// What to do when the destination name is already taken.
public enum ConflictPolicy: String, Sendable, Hashable, Codable, CaseIterable, WordChoice {
    /// Stop with ``CofferError/Kind/fileExists``; nothing changes. The default everywhere.
    case fail
    /// Pick a free name such as `report (2).pdf`, keeping every extension.
    case keepBoth
    /// Put the new item in the old one's place; the old one is kept (a file as a version of
    /// itself where the service keeps versions, else in the trash), restorable.
    /// Only an item of the same sort is replaced: a folder by a folder, a file by a file.
    case replace
    /// As ``replace``, and also a folder by a file or a file by a folder: what the caller
    /// asks for only when it has been told what is there (`--replace-folder`, `replaceFolder`).
    case replaceFolder

    /// Whether the existing item makes way (to the trash).
    public var replaces: Bool { self == .replace || self == .replaceFolder }
}

extension ConflictPolicy {
    /// Refuses a replace that would put a file in a folder's place or a folder in a file's,
    /// unless it is ``replaceFolder``: one rule for every replace, in `files:`, on a mount, or
    /// on the host (an export).
    /// - Throws: `fileExists` with the detail `folder-in-the-way` or `file-in-the-way`.
    public func checkReplacing(folder existingIsFolder: Bool, with arrivingIsFolder: Bool,
                               at path: VirtualPath?) throws(CofferError) {
        guard existingIsFolder != arrivingIsFolder, self != .replaceFolder else { return }
        throw CofferError(.fileExists, path: path, detail: existingIsFolder ? "folder-in-the-way" : "file-in-the-way")
    }
}
