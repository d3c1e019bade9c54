public import CofferCore
import Foundation

/// Adds and removes tags (``FileTags``, the `user.xdg.tags` attribute) of items. Each item
/// gets its own outcome; one failure does not stop the others. Audited per item.
public struct TagItems: FileOperation {
    public static let name = "tag"
    public static let changesFiles = true

    public var paths: [VirtualPath]
    public var adding: [String]
    public var removing: [String]

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

/// The tags of one item.
public struct ReadTags: FileOperation {
    public static let name = "tags"
    public var path: VirtualPath
    public init(_ path: VirtualPath) { self.path = path }
    public func run(in context: OperationContext) async throws(CofferError) -> [String] {
        try await context.service.tags(of: path)
    }
}

/// Every tag in use below a folder (`files:/` when none is given), with how many items carry
/// it: most used first, then by name.
public struct CountTags: FileOperation {
    public static let name = "tags"
    public var folder: VirtualPath
    public init(below folder: VirtualPath = .root()) { self.folder = folder }
    public func run(in context: OperationContext) async throws(CofferError) -> [(tag: String, count: Int)] {
        let counts = try await context.service.tagCounts(below: folder)
        return counts.map { (tag: $0.key, count: $0.value) }.sorted {
            $0.count != $1.count ? $0.count > $1.count : $0.tag.localizedStandardCompare($1.tag) == .orderedAscending
        }
    }
}
