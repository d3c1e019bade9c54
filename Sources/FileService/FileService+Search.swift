import CofferBackends
@_spi(Engine) public import CofferCore
public import CofferSearch
import Foundation
import Synchronization

/// What the search index holds.
public struct SearchIndexSummary: Sendable, Equatable {
    /// How many items it knows, folders included.
    public var items: Int
    /// How many of them are folders.
    public var folders: Int
}

/// Which search engine answered.
public enum SearchEngine: String, Sendable, Codable {
    /// A walk of the folders, reading them as it goes.
    case walk
    /// The mount's SQLite index.
    case index
}

/// A name search (``SearchItems``).
public struct SearchQuery: Sendable {
    /// What a name must contain or match.
    public var pattern: NamePattern
    /// The folder searched, with everything below it.
    public var scope: VirtualPath
    /// Type identifiers; a match must conform to one of them. Empty: any type.
    public var types: [String]
    /// The most matches reported; `nil`: all.
    public var limit: Int?
    /// Forces an engine; `nil` uses the index when it can answer, else walks.
    public var engine: SearchEngine?
    /// What is reported of each match.
    public var detail: SearchDetail
    /// Dates, sizes and tags matches must have besides their names.
    public var filters: SearchFilters
    /// The order of the matches; `nil`: walk order, as they are found. An order collects
    /// every match first, then reports the first `limit` of them.
    public var order: CofferCore.SortOrder?

    /// A search for `pattern` below `scope` (all of `files:` by default), every match
    /// reported as a node, in walk order.
    public init(pattern: NamePattern, scope: VirtualPath = .root(), types: [String] = [], limit: Int? = nil,
                engine: SearchEngine? = nil, detail: SearchDetail = .nodes, filters: SearchFilters = SearchFilters(),
                order: CofferCore.SortOrder? = nil) {
        self.pattern = pattern
        self.scope = scope
        self.types = types
        self.limit = limit
        self.engine = engine
        self.detail = detail
        self.filters = filters
        self.order = order
    }

    /// Whether a match known by its path alone passes (no type, date, size or tag to check).
    var needsNodes: Bool { detail == .nodes || !types.isEmpty || !filters.isEmpty }
}

/// What a search reports of each match.
public enum SearchDetail: Sendable {
    /// Its node, read from storage as it is at that moment: size, dates, flags
    /// (``SearchEvent/matches(_:)``).
    case nodes
    /// Its path alone (``SearchEvent/paths(_:)``), for a front end that shows nothing else.
    /// A match the engine already knows to be there and visible is then not read at all:
    /// the walk has just listed its folder; the index has just compared every folder with
    /// the disk (a process without a watch) and reads only the folders with a hidden list.
    case paths
}

/// What a search reports, as it goes.
public enum SearchEvent: Sendable {
    /// Items whose names match, the next in order (a batch, so long answers do not cost
    /// one hand-over each).
    case matches([FileNode])
    /// The same, as paths only, for a query asking for ``SearchDetail/paths``.
    case paths([VirtualPath])
    /// A folder the walk could not read and went past.
    case unreadable(VirtualPath, CofferError)
    /// The limit was reached and more matches exist. Always the last event.
    case truncated
}

/// A search under way: the engine answering, and its events.
public struct SearchResults: Sendable {
    /// The engine answering: the index, or a walk.
    public let engine: SearchEngine
    /// The matches as they are found: in walk order (each folder's items in natural order,
    /// folders first, each folder's contents right after it), or in the query's
    /// ``SearchQuery/order`` when it names one. A folder that cannot be read is an event
    /// (``SearchEvent/unreadable(_:_:)``), not the end of the search.
    public let events: AsyncThrowingStream<SearchEvent, any Error>
}

extension FileService {
    /// Finds items below `query.scope` whose names contain the pattern (ignoring case,
    /// accents and width), leaving out hidden items and the insides of packages.
    ///
    /// The mount's index answers when it is complete and covers the scope; otherwise (or
    /// with `engine: .walk`) the folders are walked, streaming — in memory, the names of the
    /// folders on the current branch, plus subfolders read ahead up to about 32,768 names
    /// and 256 matches waiting for their details —, never following links, and reporting
    /// folders that cannot be read.
    @_spi(Engine) public func search(_ query: SearchQuery) async throws(CofferError) -> SearchResults {
        if let order = query.order { return try await sortedSearch(query, order: order) }
        let backend = try mount(for: query.scope).backend
        try requireKnownTypes(query.types)
        guard query.limit.map({ $0 >= 0 }) ?? true else { throw CofferError(.invalidArgument, detail: "negative limit") }
        let scope: FileNode
        if let known = try statImmediately(query.scope) { scope = known } else { scope = try await stat(query.scope) }
        guard scope.kind != .file else { throw CofferError(.notADirectory, path: query.scope) }
        if query.engine != .walk, let index = searchIndex,
           let found = await index.candidates(for: query.pattern, below: query.scope, filters: query.filters) {
            // What hidden lists edited in place hide (no folder's time shows it), when a
            // pass has just vouched for everything else.
            let visible = found.verified ? await visibleCandidates(found, in: backend) : nil
            if !query.needsNodes, let visible {
                return SearchResults(engine: .index, events: AsyncThrowingStream { continuation in
                    _ = SearchFilter(query: query, registry: registry, backend: backend, continuation: continuation)
                        .admit(paths: visible)
                    continuation.finish()
                })
            }
            let candidates = visible ?? found.paths
            if candidates.count <= PendingMatches.batchSize {
                // One batch (the usual answer): read here and handed over whole, without a
                // task to feed the stream.
                let nodes = await backend.nodes(at: candidates)
                let gone = zip(candidates, nodes).filter { $0.1 == nil }.map(\.0)
                if !gone.isEmpty { await index.update(gone) }
                let tagged = await SearchFilter.carryingTags(nodes, query: query, backend: backend)
                return SearchResults(engine: .index, events: AsyncThrowingStream { continuation in
                    _ = SearchFilter(query: query, registry: registry, backend: backend, continuation: continuation).admit(tagged)
                    continuation.finish()
                })
            }
            return SearchResults(engine: .index, events: stream(query, backend) { filter in
                for start in stride(from: 0, to: candidates.count, by: PendingMatches.batchSize) {
                    try Task.checkCancellation()
                    let batch = Array(candidates[start..<min(start + PendingMatches.batchSize, candidates.count)])
                    let nodes = await backend.nodes(at: batch)
                    // Gone since they were indexed (changes the index has not seen yet).
                    let gone = zip(batch, nodes).filter { $0.1 == nil }.map(\.0)
                    if !gone.isEmpty { await index.update(gone) }
                    guard filter.admit(await filter.carryingTags(nodes)) else { return }
                }
            })
        }
        return SearchResults(engine: .walk, events: stream(query, backend) { filter in
            try await self.walkSearch(backend, query.scope, filter: filter)
        })
    }

    /// A search whose matches come in `order`: every match collected (as nodes), sorted, and
    /// the first `limit` reported, `truncated` after them when there were more.
    private func sortedSearch(_ query: SearchQuery, order: CofferCore.SortOrder) async throws(CofferError) -> SearchResults {
        var unordered = query
        unordered.order = nil
        unordered.limit = nil
        unordered.detail = .nodes
        let results = try await search(unordered)
        var nodes: [FileNode] = []
        var unreadable: [SearchEvent] = []
        do {
            for try await event in results.events {
                switch event {
                case .matches(let found): nodes += found
                case .unreadable: unreadable.append(event)
                case .paths, .truncated: break
                }
            }
        } catch {
            throw CofferError.wrapping(error, path: query.scope)
        }
        // By the field alone, folders among files (a search is not a listing): sizes put
        // what has none (folders) last; ties go by name in natural order, then by path.
        let keys = nodes.map { NaturalSortKey($0.name) }
        let sorted = nodes.indices.sorted { left, right in
            let a = nodes[left], b = nodes[right]
            switch order.field {
            case .size:
                let (x, y) = (a.contentSize ?? -1, b.contentSize ?? -1)
                if x != y { return order.ascending ? (x >= 0 && (y < 0 || x < y)) : x > y }
            case .modificationDate:
                if a.modificationDate != b.modificationDate {
                    return order.ascending ? a.modificationDate < b.modificationDate : a.modificationDate > b.modificationDate
                }
            case .name, .kind:
                break
            }
            if keys[left] != keys[right] { return order.ascending || order.field != .name ? keys[left] < keys[right] : keys[right] < keys[left] }
            return a.path.description < b.path.description
        }.map { nodes[$0] }
        let shown = query.limit.map { Array(sorted.prefix($0)) } ?? sorted
        return SearchResults(engine: results.engine, events: AsyncThrowingStream { continuation in
            for event in unreadable { continuation.yield(event) }
            if !shown.isEmpty { continuation.yield(query.detail == .paths ? .paths(shown.map(\.path)) : .matches(shown)) }
            if shown.count < sorted.count { continuation.yield(.truncated) }
            continuation.finish()
        })
    }

    /// The index's candidates that are visible now, when a pass has just vouched for every
    /// folder: the listings of the folders with a hidden list on the way (what an edit of
    /// it in place hides or shows) decide; `nil` when one cannot be read.
    private func visibleCandidates(_ found: SearchIndex.Candidates, in backend: any StorageBackend) async
        -> [VirtualPath]?
    {
        guard !found.hiddenListFolders.isEmpty else { return found.paths }
        var visible: [VirtualPath: Set<String>] = [:]
        for (folder, listing) in zip(found.hiddenListFolders, await backend.entries(inFoldersAt: found.hiddenListFolders)) {
            guard case .success(let entries) = listing else { return nil }
            visible[folder] = Set(entries.filter { !$0.isHidden }.map(\.name))
        }
        return found.paths.filter { path in
            var folder = VirtualPath.root(of: path.mount)
            for name in path.components {
                if let names = visible[folder], !names.contains(name) { return false }
                folder = folder.appending(trustedName: name)
            }
            return true
        }
    }

    /// Runs `body` as a task feeding a stream (its filter reads tags from `backend`, the
    /// scope's); a consumer that stops listening cancels it.
    private func stream(_ query: SearchQuery, _ backend: any StorageBackend,
                                    _ body: @escaping @Sendable (SearchFilter) async throws -> Void)
        -> AsyncThrowingStream<SearchEvent, any Error>
    {
        AsyncThrowingStream { continuation in
            let filter = SearchFilter(query: query, registry: registry, backend: backend, continuation: continuation)
            let task = Task {
                do {
                    try await body(filter)
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: CofferError.wrapping(error, path: query.scope))
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Walks `scope` depth-first, reporting matches through `filter`.
    /// A backend that lists a tree more cheaply at once (an S3 bucket) is asked once, and
    /// the walk reads its folders and matches from that listing.
    private func walkSearch(_ backend: any StorageBackend, _ scope: VirtualPath,
                                        filter: SearchFilter) async throws {
        let source = if let tree = backend as? any TreeListingBackend {
            WalkSource(tree: try await tree.contentsOfTree(at: scope))
        } else {
            WalkSource(backend)
        }
        let entries = try await source.entries([scope])[0].get()
        let matches = PendingMatches(source: source, filter: filter)
        if try await walkSearch(source, scope, entries: entries, matches: matches) { _ = await matches.flush() }
    }

    /// One folder of a walk, whose entries have been read; `false` once the search is over.
    ///
    /// Only matches and subfolders need ordering (most names are neither). Matches' nodes
    /// and the next subfolders' entries are asked for in batches, so a walk costs a few
    /// backend calls per batch of folders and of matches rather than one per item.
    private func walkSearch(_ source: WalkSource, _ folder: VirtualPath, entries: [FolderEntry],
                                        matches: PendingMatches) async throws -> Bool {
        let filter = matches.filter
        var chosen: [(path: VirtualPath, isFile: Bool, matches: Bool, descends: Bool, key: NaturalSortKey)] = []
        for entry in entries where !entry.isHidden {
            let matches = filter.query.pattern.matches(entry.name)
            let descends = entry.kind == .folder && !registry.isPackage(folderNamed: entry.name)
            if matches || descends {
                chosen.append((folder.appending(trustedName: entry.name), entry.kind != .folder, matches, descends,
                               NaturalSortKey(entry.name)))
            }
        }
        chosen.sort { a, b in a.isFile != b.isFile ? !a.isFile : a.key < b.key }
        var listings = Lookahead(chosen.filter(\.descends).map(\.path), size: 32, budget: 32_768,
                                 weigh: { (try? $0.get().count) ?? 1 }) { await source.entries($0) }
        for item in chosen {
            try Task.checkCancellation()
            if item.matches, await !matches.add(item.path) { return false }
            guard item.descends else { continue }
            switch await listings.value(for: item.path) {
            case .success(let entries):
                if try await !walkSearch(source, item.path, entries: entries, matches: matches) { return false }
            case .failure(let error):
                // Reported in its place: the matches before it go out first.
                guard await matches.flush() else { return false }
                filter.report(.unreadable(item.path, error))
            }
        }
        return true
    }

    // MARK: Keeping the index current

    /// The name index of one mount (`files:` in a standard container); `nil`: searches walk.
    var searchIndex: SearchIndex? { features[SearchIndex.self] }

    /// Tells the search index that the items at `paths` changed (created, replaced, moved
    /// away or here, removed), before the operation that changed them returns.
    func indexChanged(_ paths: [VirtualPath]) async {
        guard let searchIndex else { return }
        let covered = paths.filter { $0.mount == searchIndex.mount }
        if !covered.isEmpty { await searchIndex.update(covered) }
    }

    /// Brings the search index up to date in the background. With `watching`, the mount is
    /// also watched, so changes made by other programs reach the index while this process
    /// runs (the interactive REPL and the RPC server do this; one-off commands do not, and
    /// their searches compare folder times first instead).
    @_spi(Engine) public func startIndexing(watching: Bool) async {
        await searchIndex?.start(watching: watching)
    }

    /// Brings the search index up to date now, building it if needed (from scratch with
    /// `rebuild`), and waits. `nil` when the service has no index or its database fails.
    @_spi(Engine) public func updateSearchIndex(rebuild: Bool = false) async -> SearchIndexSummary? {
        guard let searchIndex else { return nil }
        if rebuild { searchIndex.rebuild() }
        await searchIndex.reconcile()
        guard searchIndex.isComplete, let counts = await searchIndex.counts() else { return nil }
        return SearchIndexSummary(items: counts.items, folders: counts.folders)
    }

    /// Stops the index's watch and any pass in progress.
    @_spi(Engine) public func stopIndexing() {
        searchIndex?.stop()
    }

    // MARK: Watching

    /// Reports changes below the folder at `path` (in all its subfolders unless
    /// `recursive` is false), or to the file at `path`, including changes made by other
    /// programs. `onChange` gets batches, coalesced over about 100 ms; moves arrive as
    /// `deleted` at the old path and `created` at the new one. Cancel the returned watch
    /// to stop.
    @_spi(Engine) public func watch(_ path: VirtualPath, recursive: Bool = true,
                                  onChange: @escaping @Sendable ([FileChange]) -> Void) async throws(CofferError) -> any ChangeWatch {
        guard let backend = try mount(for: path).backend as? any WatchableBackend else {
            throw CofferError(.unsupported, path: path, detail: "watch")
        }
        return try await call(path) { try await backend.watch(path, recursive: recursive, handler: onChange) }
    }
}

/// What a walk reads: folders' entries and matches' nodes, from the backend or from a
/// listing of the whole tree made beforehand.
struct WalkSource: Sendable {
    let entries: @Sendable ([VirtualPath]) async -> [Result<[FolderEntry], CofferError>]
    let nodes: @Sendable ([VirtualPath]) async -> [FileNode?]

    init(_ backend: any StorageBackend) {
        entries = { await backend.entries(inFoldersAt: $0) }
        nodes = { await backend.nodes(at: $0) }
    }

    init(tree: [VirtualPath: [FileNode]]) {
        entries = { folders in
            folders.map { folder in
                guard let nodes = tree[folder] else { return .failure(CofferError(.noSuchFile, path: folder)) }
                return .success(nodes.map { FolderEntry(name: $0.name, kind: FolderEntry.Kind(of: $0), isHidden: $0.isHidden) })
            }
        }
        let byPath = Dictionary(tree.values.joined().map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        nodes = { paths in paths.map { byPath[$0] } }
    }
}

/// Matches a walk has found, read (`nodes(at:)`) and passed to the filter in batches.
final class PendingMatches {
    static let batchSize = 256
    let filter: SearchFilter
    private let source: WalkSource
    private var paths: [VirtualPath] = []

    init(source: WalkSource, filter: SearchFilter) {
        self.source = source
        self.filter = filter
    }

    /// Queues a match; `false` once the search is over.
    func add(_ path: VirtualPath) async -> Bool {
        paths.append(path)
        return paths.count < Self.batchSize ? true : await flush()
    }

    /// Reads and reports the queued matches in order; `false` once the search is over.
    func flush() async -> Bool {
        let batch = paths
        paths.removeAll(keepingCapacity: true)
        guard !batch.isEmpty else { return true }
        // The walk has just listed these folders: a query for paths needs nothing more.
        if !filter.query.needsNodes { return filter.admit(paths: batch) }
        return filter.admit(await filter.carryingTags(await source.nodes(batch)))
    }
}

/// Values for keys asked for in a known order, fetched `size` at a time.
struct Lookahead<Value: Sendable> {
    private let keys: [VirtualPath]
    /// The most keys fetched at once.
    private let limit: Int
    /// How much fetched values may weigh together, and how to weigh one.
    private let budget: Int
    private let weigh: (Value) -> Int
    private let fetch: ([VirtualPath]) async -> [Value]
    private var size = 1
    private var next = 0
    private var fetched: [VirtualPath: Value] = [:]

    /// Fetches up to `size` keys at once, fewer when the values fetched so far weigh so
    /// much that `size` of them would pass `budget` (folders of 100,000 names come one by one).
    init(_ keys: [VirtualPath], size: Int, budget: Int = .max, weigh: @escaping (Value) -> Int = { _ in 1 },
         fetch: @escaping ([VirtualPath]) async -> [Value]) {
        self.keys = keys
        self.limit = size
        self.budget = budget
        self.weigh = weigh
        self.fetch = fetch
        self.size = min(size, 4)
    }

    /// The value of `key`, which must come next in `keys` after those already asked for.
    mutating func value(for key: VirtualPath) async -> Value {
        if let value = fetched.removeValue(forKey: key) { return value }
        let chunk = Array(keys[next..<min(next + size, keys.count)])
        next += chunk.count
        let values = await fetch(chunk)
        for (chunkKey, value) in zip(chunk, values) { fetched[chunkKey] = value }
        // Start small, then fetch as many as the budget allows at the weight seen so far.
        let weight = max(1, values.reduce(0) { $0 + weigh($1) } / max(1, values.count))
        size = max(1, min(limit, budget / weight))
        return fetched.removeValue(forKey: key)!
    }
}

/// Applies a query's type filter and limit to matches, and feeds the stream.
final class SearchFilter: Sendable {
    let query: SearchQuery
    private let registry: TypeRegistry
    /// Where tags are read, for a query with a tag filter.
    private let backend: (any StorageBackend)?
    private let continuation: AsyncThrowingStream<SearchEvent, any Error>.Continuation
    private let count = Mutex(0)

    init(query: SearchQuery, registry: TypeRegistry, backend: (any StorageBackend)?,
         continuation: AsyncThrowingStream<SearchEvent, any Error>.Continuation) {
        self.query = query
        self.registry = registry
        self.backend = backend
        self.continuation = continuation
    }

    /// `nodes` with those not carrying every tag the query asks for left out (as `nil`).
    func carryingTags(_ nodes: [FileNode?]) async -> [FileNode?] {
        await Self.carryingTags(nodes, query: query, backend: backend)
    }

    static func carryingTags(_ nodes: [FileNode?], query: SearchQuery, backend: (any StorageBackend)?) async -> [FileNode?] {
        guard !query.filters.tags.isEmpty else { return nodes }
        guard let tagging = backend as? any TaggingBackend else { return nodes.map { _ in nil } }
        var kept: [FileNode?] = []
        for node in nodes {
            // Only what passes the cheaper filters is asked for its tags.
            guard let node, !node.isHidden, query.filters.admits(node),
                  let tags = try? await tagging.tags(at: node.path),
                  query.filters.tags.allSatisfy(tags.contains)
            else { kept.append(nil); continue }
            kept.append(node)
        }
        return kept
    }

    /// Reports the nodes that pass, in one event; `false` once the search should stop (the
    /// limit was reached and one more match was found, which is reported as `.truncated`).
    /// `nil` stands for an item that could not be read (gone meanwhile): it is skipped.
    func admit(_ nodes: [FileNode?]) -> Bool {
        var admitted: [FileNode] = []
        var reached = false
        count.withLock { count in
            for case let node? in nodes where !node.isHidden && query.filters.admits(node)
                && (query.types.isEmpty || query.types.contains(where: { registry.conforms(node.typeIdentifier, to: $0) })) {
                if let limit = query.limit, count >= limit { reached = true; break }
                count += 1
                admitted.append(node)
            }
        }
        if !admitted.isEmpty { continuation.yield(query.detail == .paths ? .paths(admitted.map(\.path)) : .matches(admitted)) }
        if reached { continuation.yield(.truncated) }
        return !reached
    }

    /// The same for matches known to be there and visible, reported as paths.
    func admit(paths: [VirtualPath]) -> Bool {
        let (admitted, reached) = count.withLock { count -> ([VirtualPath], Bool) in
            guard let limit = query.limit, count + paths.count > limit else {
                count += paths.count
                return (paths, false)
            }
            let taken = Array(paths.prefix(max(0, limit - count)))
            count += taken.count
            return (taken, true)
        }
        if !admitted.isEmpty { continuation.yield(.paths(admitted)) }
        if reached { continuation.yield(.truncated) }
        return !reached
    }

    func report(_ event: SearchEvent) { continuation.yield(event) }
}

/// A search index is a feature: its upkeep is a watch of its mount that keeps it live.
extension SearchIndex: ServiceFeature {
    public func keepUp(_ service: FileService) async { await start(watching: true) }
    public func stopKeepingUp() { stop() }
}
