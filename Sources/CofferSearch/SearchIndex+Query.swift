public import CofferCore
import Foundation
import Synchronization

/// Searching: the candidates for a pattern, from the name index.
extension SearchIndex {
    /// What the index answers for a search.
    public struct Candidates: Sendable {
        /// The paths whose names contain the pattern, in walk order.
        public var paths: [VirtualPath]
        /// Whether a pass has just compared every folder with the disk (in a process
        /// without a watch). The paths are then what the folders hold now, but for what a
        /// hidden list edited in place hides: a folder's time does not show such an edit.
        public var verified: Bool
        /// When `verified`: the folders on the way to the paths that hold a hidden list,
        /// whose listings say which of the paths are hidden now.
        public var hiddenListFolders: [VirtualPath]
        /// Whether the paths also pass the date, size and tag filters asked for, by the
        /// rows' facts, kept current by the live watch (``factsAreCurrent``); otherwise
        /// the paths match by name alone and the caller reads them to judge the filters.
        public var filtered = false
    }

    /// The paths whose names contain `pattern`, below `scope`, in walk order — or `nil`
    /// when the index cannot answer (`scope` not indexed, the database failing, or, in a
    /// process with a live watch, the build not finished yet), in which case the caller walks.
    ///
    /// An unfinished build is finished here by a process without a watch (a one-off
    /// command, a script): it continues from the last batch any earlier process committed,
    /// so a build cut short costs the next command only what is left. The first search in
    /// a container pays for the build once — about ten walks' worth — and every later one
    /// is answered from the index. A process with a watch (the REPL on a terminal, the RPC
    /// server) builds in the background instead and walks until the build is done.
    ///
    /// With `filters`, a live index whose facts are current answers them too (``Candidates/filtered``).
    public func candidates(for pattern: NamePattern, below scope: VirtualPath,
                           filters: SearchFilters = SearchFilters()) async -> Candidates? {
        guard scope.mount == mount else { return nil }
        if state.withLock({ $0.connection == nil }) {
            guard await database({ _ throws(SQLiteError) in () }) != nil else { return nil }
        }
        if !isComplete && isLive {
            startPass()
            return nil
        }
        // Without a watch, compare folder times now (which finishes a build cut short);
        // with one, changes arrive as they happen, but the pass that catches up with what
        // changed before (at start, or after lost events) must have finished.
        let live = isLive
        let passes = statistics.passes
        if live { await waitForPass() } else { await reconcile() }
        var filtering = !filters.isEmpty && factsAreCurrent
        guard isComplete, var paths = await query(pattern, below: scope, filters: filtering ? filters : SearchFilters())
        else { return nil }
        if live && !filters.isEmpty && !filtering && paths.count > Self.readingLimit {
            // Reading that many matches to judge the filters takes longer than the rows' refresh
            // (`*` with a tag: every item), which a live index has under way: wait for it.
            await waitForFacts()
            if factsAreCurrent, let narrowed = await query(pattern, below: scope, filters: filters) {
                (paths, filtering) = (narrowed, true)
            }
        }
        if filtering { return Candidates(paths: paths, verified: false, hiddenListFolders: [], filtered: true) }
        // In a process without a watch, passes are started by its searches alone, one at
        // a time: a pass counted since the call began is one that compared every folder.
        let verified = !live && statistics.passes > passes
        guard verified, !paths.isEmpty else { return Candidates(paths: paths, verified: verified, hiddenListFolders: []) }
        let listed = await database(quick: true) { connection throws(SQLiteError) -> Set<String> in
            var keys = Set<String>()
            let folders = try connection.statement("SELECT path FROM folders WHERE hidden = 1")
            while try folders.step() { keys.insert(folders.text(0)) }
            return keys
        }
        guard let listed else { return Candidates(paths: paths, verified: false, hiddenListFolders: []) }
        var onTheWay = Set<String>()
        if !listed.isEmpty {
            for path in paths {
                var key = ""
                if listed.contains(key) { onTheWay.insert(key) }
                for name in path.components.dropLast() {
                    key = Self.child(name, of: key)
                    if listed.contains(key) { onTheWay.insert(key) }
                }
            }
        }
        return Candidates(paths: paths, verified: true, hiddenListFolders: onTheWay.sorted().map(path(forKey:)))
    }

    /// Matches by name past which a filtered search in a live index waits for its rows' facts
    /// rather than reading the matches one by one (with their tags, some 45 ms a thousand:
    /// 4.5 s for 100,000, against about 2 s to refresh the rows of 100,000 items).
    static let readingLimit = 20_000

    /// ``candidates(for:below:filters:)`` from the rows as they are, without first comparing
    /// folders with the disk; `nil` when the scope is not indexed or the database fails.
    /// `filters` are judged by the rows' facts, whatever their age.
    public func query(_ pattern: NamePattern, below scope: VirtualPath,
                      filters: SearchFilters = SearchFilters()) async -> [VirtualPath]? {
        let scopeKey = Self.key(scope)
        let rows: [[String]]?? = await database(quick: true) { connection throws(SQLiteError) -> [[String]]? in
            try connection.execute("PRAGMA cache_size = -\(Self.queryCacheKiB);")
            let scoped = try connection.statement("SELECT 1 FROM folders WHERE path = ?1").bind(1, scopeKey)
            guard try scoped.step() else { return nil }
            let range = scopeKey.isEmpty ? "" : " AND e.path >= ?2 AND e.path < ?3"
            // The filters' values are numbered after the pattern's (?1) and the scope's (?2, ?3).
            let conditions = IndexedItem.conditions(for: filters, from: 4)
            let filtered = conditions.sql
            let folded = String(decoding: pattern.folded, as: UTF8.self)
            let statement: SQLiteStatement
            if pattern.foldedLength >= 3 {
                statement = try connection.statement(
                    "SELECT e.path, e.folded FROM names JOIN entries e ON e.id = names.rowid WHERE names MATCH ?1"
                    + range + filtered + " ORDER BY e.sortkey")
                statement.bind(1, try Self.matchExpression(for: folded, in: connection))
            } else {
                statement = try connection.statement(
                    "SELECT e.path, e.folded FROM entries e WHERE e.folded LIKE ?1 ESCAPE '\\'" + range
                    + filtered + " ORDER BY e.sortkey")
                statement.bind(1, "%" + Self.escapeLike(folded) + "%")
            }
            if !scopeKey.isEmpty { statement.bind(2, scopeKey + "/").bind(3, scopeKey + "0") }
            for (offset, value) in conditions.values.enumerated() { value.bind(to: statement, at: Int32(offset + 4)) }
            var paths: [[String]] = []
            // The tokenizer folds case on its own; the pattern's test keeps both engines equal.
            while try statement.step() {
                if pattern.matches(foldedName: statement.text(1)) { paths.append(statement.components(0)) }
            }
            return paths
        }
        guard let found = rows.flatMap({ $0 }) else { return nil }
        return found.map { VirtualPath(mount: mount, trustedComponents: $0) }
    }

    /// What the name index is asked for a folded pattern of three characters or more: two
    /// of its trigrams, both required — the rarest, as the counts know them, and the one
    /// farthest from it (neighbouring trigrams of a word come together, distant ones sort
    /// names apart). Every name holding the pattern holds both,
    /// and the pattern's own test after the query removes the rest. Reading two lists
    /// instead of every trigram's, and positions not at all, is most of a query's time
    /// saved. Short patterns, and an index without counts, ask for the whole phrase.
    static func matchExpression(for folded: String, in connection: SQLiteConnection) throws(SQLiteError) -> String {
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        let scalars = Array(folded.unicodeScalars)
        guard scalars.count >= 6, try connection.statement("SELECT 1 FROM trigrams LIMIT 1").step() else { return quoted(folded) }
        let count = try connection.statement("SELECT names FROM trigrams WHERE term = ?1")
        var trigrams: [(text: String, names: Int)] = []
        for start in 0...(scalars.count - 3) {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[start..<(start + 3)])
            let text = String(view)
            _ = count.bind(1, text)
            // A trigram the counts lack was in no name when they were made: likely rare.
            trigrams.append((text, try count.step() ? count.int(0) : 0))
            count.reset()
        }
        let rarest = trigrams.indices.min { (trigrams[$0].names, $0) < (trigrams[$1].names, $1) }!
        // The farthest (overlapping when the pattern is too short for anything else).
        let far = trigrams.indices.filter { $0 != rarest }
            .max { (abs($0 - rarest), -trigrams[$0].names) < (abs($1 - rarest), -trigrams[$1].names) }!
        return quoted(trigrams[rarest].text) + " AND " + quoted(trigrams[far].text)
    }

    static func escapeLike(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
