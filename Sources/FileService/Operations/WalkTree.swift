public import CofferCore

/// A folder's tree, depth-first, each folder's children in natural name order: the one walk
/// every front end uses (the REPL's `tree`, MCP's `directory_tree`, `search_files` and
/// `search_file_contents`).
///
/// Performing it reads the starting folder — a file, a missing or unreadable folder fails
/// here —, and ``TreeWalk/visit(_:)`` then goes through the tree one folder at a time, so
/// only the folders on the current branch are held. A folder below the start that cannot
/// be read is met as an entry with an error and passed over. The walk stops after `limit`
/// items (the front end's ``FrontEndDefaults/walkLimit`` unless given) and says so.
public struct WalkTree: FileOperation {
    public static let name = "walk"

    /// The folder the walk starts from (not itself an entry).
    public var root: VirtualPath
    /// How deep to go: 1 for the starting folder's children only; `nil` for all levels.
    public var maxDepth: Int?
    /// Whether hidden items (dot-names, names in `.hidden`) are met, and walked into.
    public var includeHidden: Bool
    /// The most items met; `nil` for the front end's ``FrontEndDefaults/walkLimit``.
    public var limit: Int?
    /// Items left out, and everything below them: told an item's path below the start
    /// (`a/b.txt`) and its name. Items left out do not count toward the limit.
    public var excluding: (@Sendable (_ relativePath: String, _ name: String) -> Bool)?
    /// Whether packages (`.app`, `.rtfd`…, shown as one document) are walked into too, as a
    /// copy of the whole tree needs (a folder's `.zip`); by default they are met as items.
    public var intoPackages: Bool

    /// Walks the tree below `root`.
    public init(_ root: VirtualPath, maxDepth: Int? = nil, includeHidden: Bool = false, limit: Int? = nil,
                intoPackages: Bool = false, excluding: (@Sendable (_ relativePath: String, _ name: String) -> Bool)? = nil) {
        self.root = root
        self.maxDepth = maxDepth
        self.includeHidden = includeHidden
        self.limit = limit
        self.intoPackages = intoPackages
        self.excluding = excluding
    }

    public func run(in context: OperationContext) async throws(CofferError) -> TreeWalk {
        try await start(in: context.service, limit: limit ?? context.session.defaults.walkLimit)
    }

    /// The walk begun: the starting folder read.
    func start(in service: FileService, limit: Int?) async throws(CofferError) -> TreeWalk {
        let options = ListOptions(includeHidden: includeHidden, order: .byName, readsBackupExclusion: false)
        let top = try await service.list(root, options: options).items
        return TreeWalk(walk: self, service: service, options: options, top: top, limit: limit)
    }
}

/// One item met by a ``TreeWalk``, or a folder below the start that could not be read.
public struct WalkEntry: Sendable {
    /// The item; `nil` when `error` says the folder at `path` could not be read.
    public var node: FileNode?
    /// The item's virtual path.
    public var path: VirtualPath
    /// Its path below the walk's start (`Docs/a.txt`).
    public var relativePath: String
    /// 1 for the starting folder's children.
    public var depth: Int
    /// Whether it is the last of its folder's children met (what a drawn tree needs).
    public var isLast: Bool
    /// Why the folder at ``path`` could not be read; `nil` for an item met.
    public var error: CofferError?
}

/// A walk under way (see ``WalkTree``).
public struct TreeWalk: Sendable {
    let walk: WalkTree
    let service: FileService
    let options: ListOptions
    let top: [FileNode]
    let limit: Int?

    /// What a finished walk saw.
    public struct Summary: Sendable {
        /// Items met (not counting those left out).
        public var items = 0
        /// Whether it stopped at its limit with more to see.
        public var truncated = false
        /// Folders below the start that could not be read.
        public var unreadable = 0
    }

    /// Calls `body` with each item in order; a cancelled task stops it with `cancelled`.
    public nonisolated(nonsending) func visit(
        _ body: (WalkEntry) async throws(CofferError) -> Void
    ) async throws(CofferError) -> Summary {
        var summary = Summary()
        try await visit(top, relative: "", depth: 1, summary: &summary, body)
        return summary
    }

    private nonisolated(nonsending) func visit(
        _ children: [FileNode], relative: String, depth: Int, summary: inout Summary,
        _ body: (WalkEntry) async throws(CofferError) -> Void
    ) async throws(CofferError) {
        // A client's exclusion may take a while per name (a pattern that backtracks, bounded
        // in Glob): a cancel or SIGTERM is heard between two names, not after the folder.
        var shown: [(FileNode, String)] = []
        shown.reserveCapacity(children.count)
        for child in children {
            let path = relative.isEmpty ? child.name : relative + "/" + child.name
            if let excluding = walk.excluding {
                guard !Task.isCancelled else { throw CofferError(.cancelled, path: child.path) }
                if excluding(path, child.name) { continue }
            }
            shown.append((child, path))
        }
        for (index, (child, path)) in shown.enumerated() {
            guard !Task.isCancelled else { throw CofferError(.cancelled, path: child.path) }
            if let limit, summary.items >= limit {
                summary.truncated = true
                return
            }
            summary.items += 1
            try await body(WalkEntry(node: child, path: child.path, relativePath: path, depth: depth,
                                     isLast: index == shown.count - 1, error: nil))
            guard child.kind == .folder || (walk.intoPackages && child.kind == .package), child.special == nil,
                  child.linkTarget == nil, walk.maxDepth.map({ depth < $0 }) ?? true else { continue }
            let below: [FileNode]
            do {
                below = try await service.list(child.path, options: options).items
            } catch where error.kind != .cancelled {
                summary.unreadable += 1
                try await body(WalkEntry(node: nil, path: child.path, relativePath: path, depth: depth + 1,
                                         isLast: true, error: error))
                continue
            }
            try await visit(below, relative: path, depth: depth + 1, summary: &summary, body)
            if summary.truncated { return }
        }
    }
}
