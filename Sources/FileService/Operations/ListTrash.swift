public import CofferCore

/// Everything in the trash, oldest first, with what in it breaks the specification.
public struct ListTrash: FileOperation {
    public static let name = "listTrash"

    public init() {}

    public func run(in context: OperationContext) async throws(CofferError) -> TrashListing {
        try await context.service.trashItems()
    }
}
