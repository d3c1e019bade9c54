public import CofferCore
import Foundation

/// Adds and removes tags (`FileTags`, the `user.xdg.tags` attribute) of items. Each item
/// gets its own outcome; one failure does not stop the others. Audited per item.
///
/// A tag that cannot be written (empty, with a comma or a control character, or over 255
/// bytes) fails the whole operation with `invalidArgument` before any item changes. An
/// item fails alone with `noSuchFile` when it is missing, `readOnly` on a read-only mount,
/// and `unsupported` (detail `no-tags`) on a mount that keeps no tags.
public struct TagItems: FileOperation {
    public static let name = "tag"
    public static let changesFiles = true

    /// The items changed.
    public var paths: [VirtualPath]
    /// Tags each item gets (those it has already stay once).
    public var adding: [String]
    /// Tags each item loses.
    public var removing: [String]

    /// Adds `adding` to and removes `removing` from each of `paths`.
    public init(_ paths: [VirtualPath], adding: [String] = [], removing: [String] = []) {
        (self.paths, self.adding, self.removing) = (paths, adding, removing)
    }

    /// Each path with its tags after the change, or why it failed.
    public func run(in context: OperationContext) async throws(CofferError) -> [(path: VirtualPath, tags: Result<[String], CofferError>)] {
        for tag in adding + removing { try FileTags.check(tag) }
        var outcomes: [(path: VirtualPath, tags: Result<[String], CofferError>)] = []
        for path in paths {
            do {
                outcomes.append((path, .success(try await context.service.changeTags(of: path, adding: adding, removing: removing))))
            } catch {
                outcomes.append((path, .failure(error)))
            }
        }
        return outcomes
    }

    public func auditRecords(for outcome: Result<[(path: VirtualPath, tags: Result<[String], CofferError>)], CofferError>) -> [AuditRecord] {
        switch outcome {
        case .success(let items): items.map { AuditRecord(paths: [$0.path.description], outcome: $0.tags) }
        case .failure(let error): [AuditRecord(paths: paths.map(\.description), outcome: .failure(error) as Result<Void, CofferError>)]
        }
    }
}

/// The tags of one item; none on a mount that keeps no tags.
///
/// Fails with `noSuchFile` when the item is missing.
public struct ReadTags: FileOperation {
    public static let name = "tags"
    /// The item whose tags are read.
    public var path: VirtualPath
    /// Reads the tags of the item at `path`.
    public init(_ path: VirtualPath) { self.path = path }
    public func run(in context: OperationContext) async throws(CofferError) -> [String] {
        try await context.service.tags(of: path)
    }
}

/// Every tag in use below a folder (`files:/` when none is given), with how many items carry
/// it: most used first, then by name. Hidden items and the insides of packages count too;
/// folders that cannot be read are passed over. A mount that keeps no tags has none.
public struct CountTags: FileOperation {
    public static let name = "tags"
    /// The folder counted, with everything below it.
    public var folder: VirtualPath
    /// Counts the tags below `folder`.
    public init(below folder: VirtualPath = .root()) { self.folder = folder }
    public func run(in context: OperationContext) async throws(CofferError) -> [(tag: String, count: Int)] {
        let counts = try await context.service.tagCounts(below: folder)
        return counts.map { (tag: $0.key, count: $0.value) }.sorted {
            $0.count != $1.count ? $0.count > $1.count : $0.tag.localizedStandardCompare($1.tag) == .orderedAscending
        }
    }
}
