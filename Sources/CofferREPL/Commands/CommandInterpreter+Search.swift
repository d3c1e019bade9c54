import CofferCore
import CofferRuntime
import FileService
import Foundation

extension CommandInterpreter {
    /// `find pattern [path] [--type uti,…] [--limit N] [--walk]`: one matching virtual
    /// path a line, as they are found; folders that could not be read go to stderr, and
    /// make the status a failure once the search has gone on past them (as `find` does).
    func find(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "find")
        guard arguments.operands.count <= 2 else { throw usage("find") }
        // Paths are all it prints: matches are not read one by one where the engine knows them.
        // Without a pattern, every name (`find --tag work`, as `find` lists everything).
        var query = SearchQuery(pattern: try NamePattern(arguments.operands.first ?? NamePattern.everything),
                                scope: try resolve(arguments.operands.count == 2 ? arguments.operands[1] : "."),
                                detail: .paths)
        query.types = (arguments.options["type"] ?? "").split(separator: ",").map(String.init)
        if let text = arguments.options["limit"] {
            guard let limit = Int(text), limit > 0 else { throw usage("find") }
            query.limit = limit
        }
        if arguments.flags.contains("walk") { query.engine = .walk }
        let options = arguments.options
        query.filters = try SearchFilters(newer: options["newer"], older: options["older"], larger: options["larger"],
                                          smaller: options["smaller"],
                                          tags: (options["tag"] ?? "").split(separator: ",").map(String.init))
        if let text = arguments.options["sort"] {
            guard let field = ["name": SortOrder.Field.name, "date": .modificationDate, "size": .size][text] else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "--sort is name, date or size, not “\(text)”", "--sort 可以是 name、date 或 size，而不是“\(text)”")(language))
            }
            query.order = SortOrder(field)
        }
        let results = try await perform(SearchItems(query))
        var sawUnreadable = false
        do {
            for try await event in results.events {
                switch event {
                case .paths(let paths):
                    for path in paths { output.line(shown(path.description)) }
                case .matches(let nodes):
                    for node in nodes { output.line(shown(node.path.description)) }
                case .unreadable(_, let error):
                    report(error)
                    sawUnreadable = true
                case .truncated:
                    errors.line(LocalizedText("(more matches not shown: --limit \(query.limit ?? 0))",
                                              "（还有更多结果未显示：--limit \(query.limit ?? 0)）")(language))
                }
            }
        } catch {
            throw CofferError.wrapping(error, path: query.scope)
        }
        if sawUnreadable { throw Reported() }
    }

    /// `reindex [--rebuild]`: brings the search index up to date and says what it holds.
    func reindex(_ words: ArraySlice<String>) async throws(CofferError) {
        let arguments = try parse(words, as: "reindex")
        guard arguments.operands.isEmpty else { throw usage("reindex") }
        let started = ContinuousClock.now
        guard let summary = try await perform(UpdateSearchIndex(rebuild: arguments.flags.contains("rebuild"))) else {
            throw CofferError(.unsupported, detail: "search-index")
        }
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let time = String(format: "%.2f", seconds)
        output.line(LocalizedText("Search index: \(summary.items) items in \(summary.folders) folders (\(time) s).",
                                  "搜索索引：\(summary.folders) 个文件夹中的 \(summary.items) 个项目（\(time) 秒）。")(language))
    }
}
