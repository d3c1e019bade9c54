public import CofferCore

/// Everything in the trash, oldest first, with what in it breaks the specification.
///
/// Fails with `unsupported` on a service without a trash.
public struct ListTrash: FileOperation {
    public static let name = "listTrash"

    /// Lists the trash.
    public init() {}

    public func run(in context: OperationContext) async throws(CofferError) -> TrashListing {
        try await context.service.trashItems()
    }
}
