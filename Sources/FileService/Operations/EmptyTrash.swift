import CofferCore
import Foundation

/// Deletes for good what was trashed before `cutoff` (everything when `nil`): the only
/// operation in Coffer that deletes a user's file.
public struct EmptyTrash: FileOperation {
    public static let name = "emptyTrash"
    public static let changesFiles = true

    public var cutoff: Date?

    public init(olderThan cutoff: Date? = nil) { self.cutoff = cutoff }

    /// - Returns: how many items were deleted.
    public func run(in context: OperationContext) async throws(CofferError) -> Int {
        try await context.service.emptyTrash(olderThan: cutoff)
    }

    public func auditedPaths(for outcome: Result<Int, CofferError>) -> [String] { ["trash:/"] }
}
