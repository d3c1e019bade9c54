@_spi(Engine) public import CofferCore

/// Makes a symbolic link at `path` to `target`, a path relative to the link's folder that stays
/// inside the mount (`../Shared/plan.txt`): what `ln -s` asks of `coffer mount`. Coffer never
/// follows a link itself; a program that reads one through the mount is shown only those that
/// stay inside, so no link made here leads out of the sandbox.
///
/// Fails with `outsideSandbox` for an absolute target or one that climbs above the mount's root,
/// `fileExists` when something is at `path`, `noSuchFile` naming the missing folder on the way,
/// `unsupported` on storage without links (S3, memory), and `readOnly` on a read-only mount.
/// Undo moves the link to the trash. The audit entry names the link.
public struct CreateSymbolicLink: FileOperation {
    public static let name = "createSymbolicLink"
    public static let changesFiles = true

    /// Where the link is made.
    public var path: VirtualPath
    /// What it points at, relative to its folder.
    public var target: String

    /// Makes a link at `path` to `target`.
    public init(_ path: VirtualPath, target: String) {
        self.path = path
        self.target = target
    }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        try await context.service.createSymbolicLink(at: path, target: target)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] { [path.description] }
}

extension FileService {
    /// Makes the link of ``CreateSymbolicLink``.
    @_spi(Engine) public func createSymbolicLink(at path: VirtualPath, target: String) async throws(CofferError) -> FileNode {
        let backend = try writableMount(for: path).backend
        guard !path.isRoot else { throw CofferError(.fileExists, path: path) }
        guard let linking = backend as? any LinkingBackend else {
            throw CofferError(.unsupported, path: path, detail: "this storage keeps no links")
        }
        guard path.linkStaysInside(target) else {
            throw CofferError(.outsideSandbox, path: path, detail: "a link that leads out of its mount")
        }
        do throws(CofferError) {
            try await self.call(path) { try await linking.createSymbolicLink(at: path, target: target) }
        } catch {
            throw await blamingTheWay(error, to: path)
        }
        await indexChanged([path])
        ReplacedItems.current?.note(ChangeDraft(kind: .create, path: path))
        return try await stat(path)
    }
}
