public import CofferCore

/// One page of a folder's items: folders first, then in the order ``ListOptions/order``
/// names (`SortOrder`: by name, naturally, unless told; dates newest first and sizes
/// largest first unless told). Hidden items are left out unless asked for.
///
/// Fails with `noSuchFile` when the folder is missing, `notADirectory` for a file,
/// `noPermission` for a folder that cannot be read, and `unknownMount` for a mount the
/// service does not have.
public struct ListFolder: FileOperation {
    public static let name = "list"

    /// The folder listed.
    public var path: VirtualPath
    /// Which items, in which order, and which page of them.
    public var options: ListOptions

    /// Lists the folder at `path` as `options` say (every visible item, by name, by default).
    public init(_ path: VirtualPath, options: ListOptions = ListOptions()) {
        self.path = path
        self.options = options
    }

    public func run(in context: OperationContext) async throws(CofferError) -> ListPage {
        try await context.service.list(path, options: options)
    }
}
