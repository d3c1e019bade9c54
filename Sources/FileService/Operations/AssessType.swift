public import CofferCore

/// A file's type by its name and by its content (libmagic); folders by name only.
///
/// Fails with `noSuchFile` when nothing is at the path.
public struct AssessType: FileOperation {
    public static let name = "assessType"

    /// The item whose type is assessed.
    public var path: VirtualPath

    /// Assesses the type of the item at `path`.
    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> TypeAssessment { try await context.service.assessType(path) }
}
