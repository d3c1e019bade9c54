public import CofferCore

/// The `user.` extended attributes of one item (its tags among them, as `user.xdg.tags`);
/// none on a mount that keeps none.
///
/// Fails with `noSuchFile` when the item is missing.
public struct ReadAttributes: FileOperation {
    public static let name = "attributes"
    /// The item whose attributes are read.
    public var path: VirtualPath
    /// Reads the attributes of the item at `path`.
    public init(_ path: VirtualPath) { self.path = path }
    public func run(in context: OperationContext) async throws(CofferError) -> UserAttributes {
        try await context.service.userAttributes(of: path)
    }
}

/// The `user.` attributes of many items at once, as a WebDAV listing asks for its members':
/// one operation instead of one per item. Items with none, and items that are gone, are left out.
public struct ReadAttributesOfItems: FileOperation {
    public static let name = "attributes-of-items"
    /// The items whose attributes are read.
    public var paths: [VirtualPath]
    /// Reads the attributes of the items at `paths`.
    public init(_ paths: [VirtualPath]) { self.paths = paths }
    public func run(in context: OperationContext) async throws(CofferError) -> [VirtualPath: UserAttributes] {
        try await context.service.userAttributes(of: paths)
    }
}

/// Sets and removes `user.` extended attributes of one item: what WebDAV's `PROPPATCH` keeps
/// its dead properties in. Audited; tags change through ``TagItems`` instead.
///
/// All or none: returns the attributes that could not be kept (too large for the store), and
/// then nothing is changed — those set beside them are put back as they were, and none is
/// removed. Fails with
/// `invalidArgument` for a name outside `user.` or `user.xdg.tags`, `noSuchFile`, `readOnly`,
/// and `unsupported` (detail `no-attributes`) on a mount that keeps no attributes.
public struct ChangeAttributes: FileOperation {
    public static let name = "set-attributes"
    public static let changesFiles = true
    /// The item changed.
    public var path: VirtualPath
    /// Attributes set (full names to values).
    public var setting: UserAttributes
    /// Attributes taken away (full names); one the item lacks is passed over.
    public var removing: [String]

    /// Sets `setting` on and removes `removing` from the item at `path`.
    public init(_ path: VirtualPath, setting: UserAttributes = [:], removing: [String] = []) {
        (self.path, self.setting, self.removing) = (path, setting, removing)
    }

    public func run(in context: OperationContext) async throws(CofferError) -> [LostAttribute] {
        try await context.service.changeUserAttributes(of: path, setting: setting, removing: removing)
    }

    public func auditRecords(for outcome: Result<[LostAttribute], CofferError>) -> [AuditRecord] {
        [AuditRecord(paths: [path.description], outcome: outcome.map { _ in () })]
    }
}
