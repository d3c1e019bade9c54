import CofferCore
import FileService
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A folder's contents, every name (dot-names too, as the reference server shows them).
func contents(of path: VirtualPath, _ context: ToolContext) async throws(CofferError) -> [FileNode] {
    let options = ListOptions(includeHidden: true, order: .byName, readsBackupExclusion: false)
    return try await context.perform(ListFolder(path, options: options)).items
}

/// Glob patterns as `fnmatch(3)` reads them, `*` matching `/` too: a pattern is tried on
/// the path below the starting folder and on the name alone, so `*.md` finds Markdown files
/// at any depth and `docs/*.md` those below `docs`. Matched at a bounded cost (``Glob``).
struct Globs: Sendable {
    let patterns: [Glob]

    init(patterns texts: [String]) throws(CofferError) {
        patterns = try texts.map { text throws(CofferError) in try Glob(text, syntax: .fnmatch) }
    }

    func matches(relative: String, name: String) -> Bool {
        patterns.contains { pattern in pattern.matches(relative) || pattern.matches(name) }
    }
}

/// The reference server's `excludePatterns` (`minimatch` with `dot: true` on the path below the
/// folder). `search_files` tries each as written; `directory_tree` takes one without `*` also as
/// a name anywhere, with everything below it (`node_modules`).
struct ReferenceExclusion: Sendable {
    let patterns: [Glob]

    static func searching(_ texts: [String]) throws(CofferError) -> ReferenceExclusion {
        ReferenceExclusion(patterns: try texts.map { text throws(CofferError) in try Glob(text, syntax: .minimatch) })
    }

    static func tree(_ texts: [String]) throws(CofferError) -> ReferenceExclusion {
        let expanded = texts.flatMap { text in text.contains("*") ? [text] : [text, "**/\(text)", "**/\(text)/**"] }
        return ReferenceExclusion(patterns: try expanded.map { text throws(CofferError) in try Glob(text, syntax: .minimatch) })
    }

    func matches(_ relative: String) -> Bool { patterns.contains { $0.matches(relative) } }
}

/// The session's walk below a folder (``WalkTree``), as the tools see it: in name order, dot-names
/// too, leaving out what `excluding` matches (given the path below the root and the name) and
/// all below it, folders that cannot be read passed over, at most the front end's walk limit.
/// Calls `visit` with each item, its path below the root and its depth (1 for the root's
/// children); answers whether it stopped at the limit.
func walkTree(_ root: VirtualPath, excluding: @escaping @Sendable (String, String) -> Bool, maxDepth: Int? = nil,
              limit: Int? = nil, _ context: ToolContext,
              visit: (FileNode, String, Int) async throws(CofferError) -> Void) async throws(CofferError) -> Bool {
    let walk = try await context.perform(WalkTree(root, maxDepth: maxDepth, includeHidden: true, limit: limit, excluding: excluding))
    let summary = try await walk.visit { entry throws(CofferError) in
        guard let node = entry.node else { return }  // a folder below the root that cannot be read
        try await visit(node, entry.relativePath, entry.depth)
    }
    return summary.truncated
}

struct ListDirectory: MCPTool {
    static let name = "list_directory"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        let items = try await contents(of: path, context)
        let lines = items.map { ($0.kind == .folder ? "[DIR] " : "[FILE] ") + $0.name }
        return ToolOutput(text: lines.joined(separator: "\n"),
                          fields: ["entries": .array(items.map { nodeJSON($0, style, context.paths) })])
    }
}

struct ListDirectoryWithSizes: MCPTool {
    static let name = "list_directory_with_sizes"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        var items = try await contents(of: path, context)
        if try arguments.choice("sortBy", ["name", "size"], default: "name") == "size" {
            items.sort { ($0.contentSize ?? 0) > ($1.contentSize ?? 0) }
        }
        let files = items.filter { $0.kind != .folder }
        let total = files.reduce(Int64(0)) { $0 + ($1.contentSize ?? 0) }
        var lines = items.map { item in
            item.kind == .folder ? "[DIR]  \(item.name)" : "[FILE] \(item.name)  \(Self.size(item.contentSize ?? 0))"
        }
        lines.append("")
        lines.append("Total: \(files.count) files, \(items.count - files.count) directories")
        lines.append("Combined size: \(Self.size(total))")
        return ToolOutput(text: lines.joined(separator: "\n"), fields: [
            "entries": .array(items.map { nodeJSON($0, style, context.paths) }), "files": JSONValue(files.count),
            "directories": JSONValue(items.count - files.count), "totalSize": .integer(total),
        ])
    }

    /// Bytes in binary units, as the reference server writes them (`1.50 KB`).
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.2f %@", value, units[unit])
    }
}

struct DirectoryTree: MCPTool {
    static let name = "directory_tree"

    /// A folder being filled while the walk is below it.
    private final class Branch {
        var name: String
        var isFolder: Bool
        var children: [Branch] = []
        init(_ name: String, isFolder: Bool) { (self.name, self.isFolder) = (name, isFolder) }

        var json: JSONValue {
            var object: [String: JSONValue] = ["name": .string(name), "type": isFolder ? "directory" : "file"]
            if isFolder { object["children"] = .array(children.map(\.json)) }
            return .object(object)
        }
    }

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let path = try await context.path(arguments, "path").path
        let maxDepth = try arguments.optionalInteger("maxDepth", minimum: 1).map(Int.init)
        let root = Branch("", isFolder: true)
        var open: [Branch] = [root]
        var count = 0
        let exclude = try ReferenceExclusion.tree(try arguments.optionalStrings("excludePatterns"))
        let truncated = try await walkTree(path, excluding: { relative, _ in exclude.matches(relative) },
                                           maxDepth: maxDepth, context) { node, _, depth in
            count += 1
            open.removeLast(open.count - depth)
            let branch = Branch(node.name, isFolder: node.kind == .folder && node.special == nil)
            open[depth - 1].children.append(branch)
            open.append(branch)
        }
        let tree = JSONValue.array(root.children.map(\.json))
        let text = truncated ? tree.prettyText + "\n" + SearchFiles.stopped(at: count, narrowing: "maxDepth or excludePatterns") : tree.prettyText
        return ToolOutput(text: text, fields: ["tree": tree, "truncated": .bool(truncated)])
    }
}

struct SearchFiles: MCPTool {
    static let name = "search_files"

    /// What the text says when a walk stopped at its limit: a client that passes on only the
    /// text must not take a partial answer for the whole.
    static func stopped(at count: Int, narrowing: String) -> String {
        "Stopped after \(grouped(count)) items; "
            + "there are more. Narrow the search (\(narrowing)) or use find_files."
    }

    /// A search goes through this many items: a tree of 100,000 files is searched whole (the
    /// reference server has no limit; this one keeps a runaway tree from running for ever).
    static let itemLimit = 1_000_000

    /// The matches reported at most: the front end's walk limit (20,000 for MCP).
    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        let pattern = try Glob(try arguments.string("pattern"), syntax: .minimatch)
        let exclude = try ReferenceExclusion.searching(try arguments.optionalStrings("excludePatterns"))
        let reported = context.session.defaults.walkLimit ?? 20_000
        var matches: [String] = []
        var found = 0
        var visited = 0
        let walkStopped = try await walkTree(path, excluding: { relative, _ in exclude.matches(relative) }, limit: itemLimit,
                                             context) { node, relative, _ in
            visited += 1
            guard pattern.matches(relative) else { return }
            found += 1
            if matches.count < reported { matches.append(context.paths.display(node.path, style)) }
        }
        var text = matches.isEmpty ? "No matches found" : matches.joined(separator: "\n")
        if found > matches.count {
            text += "\n" + "Showing \(grouped(matches.count)) of \(grouped(found)) matches\(walkStopped ? " (at least)" : ""). Narrow the pattern or use find_files."
        } else if walkStopped {
            text += "\n" + stopped(at: visited, narrowing: "a path further down, or excludePatterns")
        }
        return ToolOutput(text: text, fields: ["matches": JSONValue(matches), "truncated": .bool(walkStopped || found > matches.count)])
    }

    static func grouped(_ count: Int) -> String { count.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US"))) }
}

struct FindFiles: MCPTool {
    static let name = "find_files"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        var scope: (path: VirtualPath, style: PathResolver.Style)?
        if let text = try arguments.optionalString("path") { scope = try await context.resolve(text) }
        let style = scope?.style ?? .host
        let limit = try arguments.optionalInteger("limit", minimum: 1).map(Int.init) ?? context.session.defaults.searchLimit ?? 100
        guard limit <= 10_000 else { throw CofferError(.invalidArgument, detail: "“limit” must be at most 10000") }
        var query = SearchQuery(pattern: try NamePattern(try arguments.string("query")), scope: scope?.path ?? .root(),
                                types: try arguments.optionalStrings("types"), limit: limit)
        query.filters = try SearchFilters(newer: try arguments.optionalString("newer"), older: try arguments.optionalString("older"),
                                          larger: try arguments.optionalString("larger"),
                                          smaller: try arguments.optionalString("smaller"), tags: try arguments.optionalStrings("tags"))
        if let sort = try arguments.optionalString("sort") {
            guard let field = ["name": SortOrder.Field.name, "modified": .modificationDate, "size": .size][sort] else {
                throw CofferError(.invalidArgument, detail: "“sort” is name, modified or size")
            }
            query.order = SortOrder(field)
        }
        let results = try await context.perform(SearchItems(query))
        var nodes: [FileNode] = []
        var truncated = false
        do {
            for try await event in results.events {
                switch event {
                case .matches(let found): nodes += found
                case .truncated: truncated = true
                case .paths, .unreadable: break
                }
            }
        } catch {
            throw CofferError.wrapping(error, path: query.scope)
        }
        let lines = nodes.map { context.paths.display($0.path, style) }
        return ToolOutput(text: lines.isEmpty ? "No matches found" : lines.joined(separator: "\n"),
                          fields: ["matches": .array(nodes.map { nodeJSON($0, style, context.paths) }), "truncated": .bool(truncated)])
    }
}

struct GetFileInfo: MCPTool {
    static let name = "get_file_info"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let path = try await context.path(arguments, "path").path
        return output(try await context.perform(StatItem(path)), context)
    }

    /// At once when no link is on the way; a link (or a failure a link may cause) is followed
    /// by ``call(_:_:)``, as the reference server follows it.
    static func callImmediately(_ arguments: Arguments, _ context: ToolContext) throws(CofferError) -> ToolOutput? {
        let path = try context.paths.resolve(try arguments.string("path")).path
        let node: FileNode?
        do { node = try context.session.performImmediately(StatItem(path)) } catch where error.kind == .unsupported { return nil }
        guard let node, node.special != .symbolicLink else { return nil }
        return output(node, context)
    }

    private static func output(_ node: FileNode, _ context: ToolContext) -> ToolOutput {
        let isFolder = node.kind != .file
        let mime = isFolder ? "inode/directory" : context.service.registry.mimeType(of: node.typeIdentifier)
        // What the storage does not know is left out rather than null: a client checks every
        // field it gets against the output schema, on every call.
        var fields: [String: JSONValue] = [
            "size": .integer(node.contentSize ?? 0), "isDirectory": .bool(isFolder),
            "isFile": .bool(!isFolder && node.special == nil), "kind": .string(node.kind.rawValue),
            "type": .string(node.typeIdentifier), "mimeType": .string(mime), "hidden": .bool(node.isHidden),
        ]
        if let modified = node.knownModificationDate { fields["modified"] = JSONValue(modified) }
        if let created = node.creationDate { fields["created"] = JSONValue(created) }
        if let accessed = node.accessDate { fields["accessed"] = JSONValue(accessed) }
        // As the reference server writes them: the last three octal digits of the mode.
        if let permissions = node.permissions { fields["permissions"] = .string(String(String(permissions & 0o777, radix: 8).suffix(3))) }
        if let special = node.special { fields["special"] = .string(special.rawValue) }
        if let target = node.linkTarget { fields["linkTarget"] = .string(target) }
        if let version = node.version { fields["version"] = .string(version.token) }
        let order = ["size", "created", "modified", "accessed", "isDirectory", "isFile", "permissions", "kind", "type", "mimeType",
                     "hidden", "special", "linkTarget", "version"]
        let lines = order.compactMap { key -> String? in
            switch fields[key] {
            case .string(let text)?: "\(key): \(text)"
            case .integer(let value)?: "\(key): \(value)"
            case .bool(let value)?: "\(key): \(value)"
            default: nil
            }
        }
        return ToolOutput(text: lines.joined(separator: "\n"), fields: fields)
    }
}

struct ListAllowedDirectories: MCPTool {
    static let name = "list_allowed_directories"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let root = context.paths.filesRoot
        let mounts = context.service.mounts.filter(\.isVisible)
        let hostFolders = context.session.allowedHostFolders ?? ["/"]
        var lines = ["Allowed directories:", root, "", "Coffer mounts:"]
        lines += mounts.map { "\($0.name):/" + ($0.isWritable ? "" : " (read-only)") }
        lines += ["", "Host folders for import and export:"] + (hostFolders.isEmpty ? ["(none)"] : hostFolders)
        return ToolOutput(text: lines.joined(separator: "\n"), fields: [
            "directories": [.string(root)],
            "mounts": .array(mounts.map { ["name": .string($0.name), "writable": .bool($0.isWritable)] }),
            "hostFolders": JSONValue(hostFolders),
        ])
    }
}
