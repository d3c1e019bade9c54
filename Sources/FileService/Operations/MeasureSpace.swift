@_spi(Engine) public import CofferCore

/// How full a mount is: what its backend reports through `SpaceReportingBackend`
/// (a `StorageSpace`).
///
/// A mount whose backend does not report its space fails with `unsupported` (detail
/// `no-space-report`); an unknown mount with `unknownMount`.
public struct MeasureSpace: FileOperation {
    public static let name = "space"

    /// The mount's name (`files`, `mem`).
    public var mount: String

    /// Measures the mount named `mount`.
    public init(mount: String) { self.mount = mount }

    public func run(in context: OperationContext) async throws(CofferError) -> StorageSpace {
        try await context.service.space(ofMount: mount)
    }
}

extension FileService {
    /// What the mount's backend reports of its space.
    @_spi(Engine) public func space(ofMount name: String) async throws(CofferError) -> StorageSpace {
        let root = VirtualPath.root(of: name)
        guard let backend = try mount(for: root).backend as? any SpaceReportingBackend else {
            throw CofferError(.unsupported, path: root, detail: "no-space-report")
        }
        return try await call(root) { try await backend.space() }
    }
}
