public import CofferCore

/// A file's type by its name and by its content (libmagic); folders by name only.
public struct AssessType: FileOperation {
    public static let name = "assessType"

    public var path: VirtualPath

    public init(_ path: VirtualPath) { self.path = path }

    public func run(in context: OperationContext) async throws(CofferError) -> TypeAssessment { try await context.service.assessType(path) }
}
