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
/// at any depth and `docs/*.md` those below `docs`.
struct Globs: Sendable {
    let patterns: [String]

    func matches(relative: String, name: String) -> Bool {
        patterns.contains { pattern in fnmatch(pattern, relative, 0) == 0 || fnmatch(pattern, name, 0) == 0 }
    }
}

/// A depth-first walk below a folder, in name order, skipping what `exclude` matches (and
/// all below it) and stopping after `limit` items.
struct TreeWalk {
    var exclude: Globs
    var maxDepth: Int?
    var limit: Int
    private(set) var visited = 0
    private(set) var truncated = false

    init(exclude: [String], maxDepth: Int? = nil, limit: Int) {
        self.exclude = Globs(patterns: exclude)
        self.maxDepth = maxDepth
        self.limit = limit
    }

    /// Calls `visit` with each item, its path below the root and its depth (1 for the root's
    /// children); `visit` says whether to go into a folder.
    mutating func walk(_ root: VirtualPath, _ context: ToolContext,
                       visit: (FileNode, String, Int) async throws(CofferError) -> Void) async throws(CofferError) {
        try await walk(root, relative: "", depth: 1, context, visit: visit)
    }

    private mutating func walk(_ folder: VirtualPath, relative: String, depth: Int, _ context: ToolContext,
                               visit: (FileNode, String, Int) async throws(CofferError) -> Void) async throws(CofferError) {
        let children: [FileNode]
        do {
            children = try await contents(of: folder, context)
        } catch {
            // The starting folder must be readable; one below it that is not is passed over.
            if depth == 1 || error.kind == .cancelled { throw error }
            return
        }
        for child in children {
            guard !Task.isCancelled else { throw CofferError(.cancelled) }
            let path = relative.isEmpty ? child.name : relative + "/" + child.name
            if exclude.matches(relative: path, name: child.name) { continue }
            guard visited < limit else {
                truncated = true
                return
            }
            visited += 1
            try await visit(child, path, depth)
            if child.kind == .folder, child.special == nil, maxDepth.map({ depth < $0 }) ?? true {
                try await walk(child.path, relative: path, depth: depth + 1, context, visit: visit)
                if truncated { return }
            }
        }
    }
}

/// The most items a tree, a search or a listing goes through in one call.
let walkLimit = 20_000

struct ListDirectory: MCPTool {
    static let name = "list_directory"
    static let title = "List directory"
    static let description = "List a folder: one line per item, [DIR] for folders and [FILE] for everything else."
    static let input = Schema.Object(["path": Schema.path], required: ["path"])
    static let output: [String: JSONValue] = ["entries": Schema.array(of: Schema.node, "The items, folders first.")]
    static let annotations = Annotations.reads

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try context.path(arguments, "path")
        let items = try await contents(of: path, context)
        let lines = items.map { ($0.kind == .folder ? "[DIR] " : "[FILE] ") + $0.name }
        return ToolOutput(text: lines.joined(separator: "\n"),
                          fields: ["entries": .array(items.map { nodeJSON($0, style, context.paths) })])
    }
}

struct ListDirectoryWithSizes: MCPTool {
    static let name = "list_directory_with_sizes"
    static let title = "List directory with sizes"
    static let description = """
        List a folder with each file's size, sorted by name or by size (largest first), and the totals.
        """
    static let input = Schema.Object([
        "path": Schema.path,
        "sortBy": Schema.oneOf(["name", "size"], "Sort by name (the default) or by size."),
    ], required: ["path"])
    static let output: [String: JSONValue] = [
        "entries": Schema.array(of: Schema.node, "The items."),
        "files": Schema.integer("How many files."),
        "directories": Schema.integer("How many folders."),
        "totalSize": Schema.integer("The files' sizes added up, in bytes."),
    ]
    static let annotations = Annotations.reads

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try context.path(arguments, "path")
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
    static let title = "Directory tree"
    static let description = """
        The tree below a folder as JSON: each entry has a name, a type (file or directory), and for a folder its \
        children. excludePatterns (globs) leave items out; maxDepth stops the descent. At most 20,000 items.
        """
    static let input = Schema.Object([
        "path": Schema.path,
        "excludePatterns": Schema.strings("Glob patterns of items to leave out (with everything below them)."),
        "maxDepth": Schema.integer("How many levels to go down (a Coffer extension; 1 lists the folder alone).", minimum: 1),
    ], required: ["path"])
    static let output: [String: JSONValue] = [
        "tree": Schema.array(of: ["type": "object"], "The entries of the folder, each with its children."),
        "truncated": Schema.boolean("Whether the tree was cut at the item limit."),
    ]
    static let annotations = Annotations.reads

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
        let path = try context.path(arguments, "path").path
        let maxDepth = try arguments.optionalInteger("maxDepth", minimum: 1).map(Int.init)
        var walk = TreeWalk(exclude: try arguments.optionalStrings("excludePatterns"), maxDepth: maxDepth, limit: walkLimit)
        let root = Branch("", isFolder: true)
        var open: [Branch] = [root]
        try await walk.walk(path, context) { node, _, depth in
            open.removeLast(open.count - depth)
            let branch = Branch(node.name, isFolder: node.kind == .folder && node.special == nil)
            open[depth - 1].children.append(branch)
            open.append(branch)
        }
        let tree = JSONValue.array(root.children.map(\.json))
        return ToolOutput(text: tree.prettyText, fields: ["tree": tree, "truncated": .bool(walk.truncated)])
    }
}

struct SearchFiles: MCPTool {
    static let name = "search_files"
    static let title = "Search files"
    static let description = """
        Find files and folders below a folder whose path or name matches a glob pattern (*.md, docs/*.txt), \
        leaving out excludePatterns. Returns their full paths. At most 20,000 items are looked at.
        """
    static let input = Schema.Object([
        "path": Schema.path,
        "pattern": Schema.string("A glob pattern, matched against the path below the folder and against the name."),
        "excludePatterns": Schema.strings("Glob patterns of items to leave out (with everything below them)."),
    ], required: ["path", "pattern"])
    static let output: [String: JSONValue] = [
        "matches": Schema.strings("The full paths of what matched."),
        "truncated": Schema.boolean("Whether the search stopped at the item limit."),
    ]
    static let annotations = Annotations.reads

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try context.path(arguments, "path")
        let pattern = Globs(patterns: [try arguments.string("pattern")])
        var walk = TreeWalk(exclude: try arguments.optionalStrings("excludePatterns"), limit: walkLimit)
        var matches: [String] = []
        try await walk.walk(path, context) { node, relative, _ in
            if pattern.matches(relative: relative, name: node.name) { matches.append(context.paths.display(node.path, style)) }
        }
        return ToolOutput(text: matches.isEmpty ? "No matches found" : matches.joined(separator: "\n"),
                          fields: ["matches": JSONValue(matches), "truncated": .bool(walk.truncated)])
    }
}

struct FindFiles: MCPTool {
    static let name = "find_files"
    static let title = "Find files by name"
    static let description = """
        Find files whose name contains a text, ignoring case, accents and width, through Coffer's search index \
        (fast on big trees). Optionally only below a folder, or only of some types (public.image, public.text…).
        """
    static let input = Schema.Object([
        "query": Schema.string("Text the name contains."),
        "path": Schema.string("Only below this folder (default: all of files:)."),
        "types": Schema.strings("Only items of these types (uniform type identifiers)."),
        "limit": Schema.integer("At most this many matches (default 100, at most 10,000).", minimum: 1),
    ], required: ["query"])
    static let output: [String: JSONValue] = [
        "matches": Schema.array(of: Schema.node, "What matched, in walk order."),
        "truncated": Schema.boolean("Whether there were more matches."),
    ]
    static let annotations = Annotations.reads

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let scope = try arguments.optionalString("path").map { (text) throws(CofferError) in try context.paths.resolve(text) }
        let style = scope?.style ?? .host
        let limit = Int(try arguments.optionalInteger("limit", minimum: 1) ?? 100)
        guard limit <= 10_000 else { throw CofferError(.invalidArgument, detail: "“limit” must be at most 10000") }
        let query = SearchQuery(pattern: try NamePattern(try arguments.string("query")), scope: scope?.path ?? .root(),
                                types: try arguments.optionalStrings("types"), limit: limit)
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
    static let title = "Get file info"
    static let description = """
        What an item is: its size, when it was created and last changed, whether it is a folder or a file, its \
        type and MIME type, and for a link where it points (links are never followed).
        """
    static let input = Schema.Object(["path": Schema.path], required: ["path"])
    static let output: [String: JSONValue] = [
        "size": Schema.integer("Bytes (0 for a folder)."),
        "created": Schema.string("When it was made (ISO 8601), where the storage knows."),
        "modified": Schema.string("When it last changed (ISO 8601)."),
        "isDirectory": Schema.boolean("Whether it is a folder."),
        "isFile": Schema.boolean("Whether it is a plain file."),
        "kind": Schema.oneOf(["file", "folder", "package"], "What Coffer shows it as."),
        "type": Schema.string("Its uniform type identifier (public.plain-text)."),
        "mimeType": Schema.string("Its MIME type."),
        "hidden": Schema.boolean("Whether listings hide it."),
        "special": Schema.string("symbolicLink, fifo, socket or device, for such items."),
        "linkTarget": Schema.string("Where a link points, as written."),
    ]
    static let annotations = Annotations.reads

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        output(try await context.perform(StatItem(try context.path(arguments, "path").path)), context)
    }

    static func callImmediately(_ arguments: Arguments, _ context: ToolContext) throws(CofferError) -> ToolOutput? {
        try context.session.performImmediately(StatItem(try context.path(arguments, "path").path)).map { output($0, context) }
    }

    private static func output(_ node: FileNode, _ context: ToolContext) -> ToolOutput {
        let isFolder = node.kind != .file
        let mime = isFolder ? "inode/directory" : MediaTypes.mimeType(of: node, registry: context.service.registry)
        // What the storage does not know is left out rather than null: a client checks every
        // field it gets against the output schema, on every call.
        var fields: [String: JSONValue] = [
            "size": .integer(node.contentSize ?? 0),
            "modified": JSONValue(node.modificationDate), "isDirectory": .bool(isFolder),
            "isFile": .bool(!isFolder && node.special == nil), "kind": .string(node.kind.rawValue),
            "type": .string(node.typeIdentifier), "mimeType": .string(mime), "hidden": .bool(node.isHidden),
        ]
        if let created = node.creationDate { fields["created"] = JSONValue(created) }
        if let special = node.special { fields["special"] = .string(special.rawValue) }
        if let target = node.linkTarget { fields["linkTarget"] = .string(target) }
        let order = ["size", "created", "modified", "isDirectory", "isFile", "kind", "type", "mimeType", "hidden", "special",
                     "linkTarget"]
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
    static let title = "List allowed directories"
    static let description = """
        The directory paths are inside (the host path of Coffer's files: mount), Coffer's mounts, and the host \
        folders import_files and export_file may use.
        """
    static let input = Schema.Object([:])
    static let output: [String: JSONValue] = [
        "directories": Schema.strings("Where paths may point: the files: root."),
        "mounts": Schema.array(of: Schema.object([
            "name": Schema.string("The mount's name (files, trash…)."),
            "writable": Schema.boolean("Whether it can be changed."),
        ], required: ["name", "writable"]), "Coffer's mounts, reached as name:/path."),
        "hostFolders": Schema.strings("Host folders import_files and export_file may use."),
    ]
    static let annotations = Annotations.reads

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
