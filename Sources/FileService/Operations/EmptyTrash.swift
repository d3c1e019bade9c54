public import CofferCore
public import Foundation

/// Deletes for good what was trashed before `cutoff` (everything when `nil`), or only the
/// items named: the only operation in Coffer that deletes a user's file.
///
/// Named items are all there or nothing is deleted: a name not in the trash fails with
/// `noSuchFile` naming it. A service without a trash fails with `unsupported`.
public struct EmptyTrash: FileOperation {
    public static let name = "emptyTrash"
    public static let changesFiles = true

    /// What was trashed before this moment is deleted; `nil`: everything.
    public var cutoff: Date?
    /// Only these items, by their names in the trash (`empty-trash NAME…`, `rm trash:/NAME`);
    /// `nil`: everything trashed before `cutoff`.
    public var items: [String]?

    /// Deletes what was trashed before `cutoff`, everything when `nil`.
    public init(olderThan cutoff: Date? = nil) { self.cutoff = cutoff }

    /// Deletes only `items`, by their names in the trash (`TrashItem` ids).
    public init(items: [String]) {
        self.cutoff = nil
        self.items = items
    }

    /// Keeping what was trashed within the last `days` days (`--older-than`, `olderThanDays`),
    /// or everything when `nil`: one rule for every front end.
    /// - Throws: `invalidArgument` for a negative or infinite number of days.
    public init(olderThanDays days: Double?, now: Date = Date()) throws(CofferError) {
        guard let days else {
            self.init()
            return
        }
        guard days >= 0, days.isFinite else {
            throw CofferError(.invalidArgument, detail: "a number of days, not negative")
        }
        self.init(olderThan: now.addingTimeInterval(-days * 86_400))
    }

    /// - Returns: how many items were deleted.
    public func run(in context: OperationContext) async throws(CofferError) -> Int {
        let service = context.service
        guard let items else {
            return try await context.withProgress { progress throws(CofferError) in try await service.emptyTrash(olderThan: cutoff, progress: progress) }
        }
        // Every item named is there, or nothing is deleted: a wrong name never leaves half done.
        let present = Set(try await service.trashItems().items.map(\.id))
        if let missing = items.first(where: { !present.contains($0) }) {
            throw CofferError(.noSuchFile, path: FileService.shownTrashPath(of: missing))
        }
        for id in items { try await service.deleteFromTrash(id) }
        return items.count
    }

    public func auditedPaths(for outcome: Result<Int, CofferError>) -> [String] {
        items.map { $0.map { "trash:/" + $0 } } ?? ["trash:/"]
    }
}
