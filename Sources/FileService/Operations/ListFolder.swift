public import CofferCore

/// One page of a folder's items: folders first, then in ``SortOrder``'s order (by name,
/// naturally, unless told; dates newest first and sizes largest first unless told).
public struct ListFolder: FileOperation {
    public static let name = "list"

    public var path: VirtualPath
    public var options: ListOptions

    public init(_ path: VirtualPath, options: ListOptions = ListOptions()) {
        self.path = path
        self.options = options
    }

    public func run(in context: OperationContext) async throws(CofferError) -> ListPage {
        try await context.service.list(path, options: options)
    }
}
