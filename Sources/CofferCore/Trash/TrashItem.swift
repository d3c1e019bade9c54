public import Foundation

/// An item in the trash.
public struct TrashItem: Sendable, Hashable {
    /// Its name in the trash (`files/<id>`, `info/<id>.trashinfo`); unique there.
    public var id: String
    /// Where restoring puts it back.
    public var originalPath: VirtualPath
    /// Whether it came from outside every mount (put there by another program): then
    /// `originalPath` is the root of `files:` and `originalHostPath` says where it was.
    public var isForeign: Bool
    /// The host path of a foreign item's original place.
    public var originalHostPath: String?
    /// When it was trashed, if the information file says.
    public var deletionDate: Date?
    /// The item as it is now, at `trash:/<id>`.
    public var node: FileNode
    /// Bytes: a file's size, or a folder's disk usage (as `du -B1`, which the spec's
    /// `directorysizes` cache holds). `nil` for a folder just trashed: listing measures it.
    public var size: Int64?

    /// A trashed item.
    public init(id: String, originalPath: VirtualPath, isForeign: Bool = false, originalHostPath: String? = nil,
                deletionDate: Date?, node: FileNode, size: Int64?) {
        self.id = id
        self.originalPath = originalPath
        self.isForeign = isForeign
        self.originalHostPath = originalHostPath
        self.deletionDate = deletionDate
        self.node = node
        self.size = size
    }

    /// Whether emptying the trash of what was trashed before `cutoff` removes this item
    /// (`nil`: emptying everything). An item without a deletion date is kept by a cutoff.
    public func isEmptied(olderThan cutoff: Date?) -> Bool {
        guard let cutoff else { return true }
        return deletionDate.map { $0 < cutoff } ?? false
    }
}

/// Something in the trash that does not follow the specification.
public struct TrashProblem: Sendable, Hashable {
    /// What is wrong with the entry.
    public enum Reason: String, Sendable {
        /// `info/<id>.trashinfo` cannot be read as an information file.
        case damagedInfo
        /// `info/<id>.trashinfo` has no item in `files/` (already restored or removed).
        case missingItem
        /// `files/<id>` has no information file; it is listed, and restored to `files:/`.
        case missingInfo
    }
    /// The entry's ID in the trash.
    public var id: String
    /// What is wrong with it.
    public var reason: Reason

    /// A problem of the entry `id`.
    public init(id: String, reason: Reason) { (self.id, self.reason) = (id, reason) }

    /// What a person reads of it, in every front end: one sentence naming the entry and what
    /// becomes of it (no command: emptying and restoring are named as what they do).
    public func message(in language: Language) -> String {
        switch reason {
        case .damagedInfo:
            LocalizedText("The trash entry “\(id)” has an information file that can't be read; it is listed without its original place.",
                          "废纸篓项目“\(id)”的信息文件无法读取；列出时不含原位置。")(language)
        case .missingItem:
            LocalizedText("The trash has information about “\(id)” but not the item; it is skipped, and emptying the trash removes it.",
                          "废纸篓中有“\(id)”的信息但没有该项目；已跳过，清空废纸篓时会清除它。")(language)
        case .missingInfo:
            LocalizedText("The trash entry “\(id)” has no information file; restoring it puts it in files:/.",
                          "废纸篓项目“\(id)”没有信息文件；恢复时会将其放到 files:/。")(language)
        }
    }
}

/// What is in the trash, and what in it does not follow the specification.
public struct TrashListing: Sendable {
    /// Oldest first.
    public var items: [TrashItem]
    /// Entries skipped or listed without information; never fatal.
    public var problems: [TrashProblem]

    /// A listing of `items`, with the `problems` met.
    public init(items: [TrashItem], problems: [TrashProblem]) { (self.items, self.problems) = (items, problems) }
}
