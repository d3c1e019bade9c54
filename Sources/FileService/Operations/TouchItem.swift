@_spi(Engine) public import CofferCore
public import Foundation

/// `touch`: makes an empty file where nothing is, or sets an existing item's modification
/// time to now, or to ``date`` (where its storage can: not an S3 object's, whose time is its
/// upload's).
///
/// Fails with `readOnly` on a read-only mount, `unsupported` (detail `touch`) for an
/// existing item whose storage cannot set its time, and, for a new file, as
/// ``WriteFile`` does (`noSuchFile` for a missing folder on the way).
public struct TouchItem: FileOperation {
    public static let name = "touch"
    public static let changesFiles = true

    /// The item touched, or the file made.
    public var path: VirtualPath

    /// The time an existing item is given; `nil` for now.
    public var date: Date?

    /// Touches the item at `path`.
    public init(_ path: VirtualPath) { self.path = path }

    /// Gives the item at `path` the modification time `date`; fails with `noSuchFile` when
    /// nothing is there.
    public init(_ path: VirtualPath, to date: Date) { (self.path, self.date) = (path, date) }

    public func run(in context: OperationContext) async throws(CofferError) -> FileNode {
        let service = context.service
        let backend = try service.writableMount(for: path).backend
        guard try await service.exists(path) else {
            // A time is given to an item that is there, never to one made for it.
            if date != nil { throw CofferError(.noSuchFile, path: path) }
            // Nothing there: an empty file, which appears whole; a name taken meanwhile is not overwritten.
            return try await service.writeFile(path, bytes: [], conflict: .fail)
        }
        guard let touching = backend as? any TouchingBackend else {
            throw CofferError(.unsupported, path: path, detail: "touch")
        }
        do {
            if let date { try await touching.setModificationDate(date, at: path) } else { try await touching.touch(path) }
        } catch { throw CofferError.wrapping(error, path: path) }
        return try await service.stat(path)
    }

    public func auditedPaths(for outcome: Result<FileNode, CofferError>) -> [String] { [path.description] }
}
