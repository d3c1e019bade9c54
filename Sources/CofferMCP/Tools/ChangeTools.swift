import CofferCore
import FileService
import Foundation

/// A node as tools show it, its path written as the request wrote paths.
func nodeJSON(_ node: FileNode, _ style: PathResolver.Style, _ paths: PathResolver) -> JSONValue {
    var object: [String: JSONValue] = [
        "path": .string(paths.display(node.path, style)), "name": .string(node.name), "kind": .string(node.kind.rawValue),
    ]
    if let modified = node.knownModificationDate { object["modified"] = JSONValue(modified) }
    if let size = node.contentSize { object["size"] = .integer(size) }
    if let version = node.version { object["version"] = .string(version.token) }
    return .object(object)
}

extension Arguments {
    /// `ifVersion`: a file's version as `get_file_info` or an earlier write gave it.
    func version(_ name: String = "ifVersion") throws(CofferError) -> FileVersion? {
        guard let text = try optionalString(name) else { return nil }
        guard let version = FileVersion(token: text) else {
            throw CofferError(.invalidArgument, detail: "“\(name)” is empty")
        }
        return version
    }
}

struct WriteFileTool: MCPTool {
    static let name = "write_file"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        let bytes = Array(try arguments.string("content").utf8)
        let limit = context.inlineLimit
        guard bytes.count <= limit else { throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes") }
        let node: FileNode
        let version = try arguments.version()
        let conflictGiven = arguments.values["conflict"] != nil && arguments.values["conflict"] != .null
        if try arguments.bool("append") {
            if conflictGiven { throw CofferError(.invalidArgument, detail: "“conflict” does not go with “append”") }
            node = try await context.perform(AppendToFile(path, bytes: bytes, ifVersion: version))
        } else {
            if conflictGiven, version != nil {
                throw CofferError(.invalidArgument, detail: "“conflict” does not go with “ifVersion”")
            }
            // A folder in the way is never replaced by a text: write_file takes no replaceFolder.
            let conflict = try arguments.conflict(replacingFolders: false)
            node = try await context.perform(WriteFile(path, bytes: bytes, conflict: conflict.map(ConflictChoice.policy),
                                                       ifVersion: version))
        }
        return ToolOutput(text: "Successfully wrote to \(context.paths.display(node.path, style))",
                          fields: ["file": nodeJSON(node, style, context.paths)])
    }
}

struct CreateDirectory: MCPTool {
    static let name = "create_directory"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        let node = try await context.perform(CreateFolder(path, intermediates: true))
        return ToolOutput(text: "Successfully created directory \(context.paths.display(path, style))",
                          fields: ["folder": nodeJSON(node, style, context.paths)])
    }
}

/// `move_file` and `copy_file`: `destination` is the new path itself (a folder to go into only
/// when it ends in `/`), and a taken one fails unless `conflict` says otherwise.
protocol TransferTool: MCPTool {
    associatedtype Operation: FileOperation where Operation.Output == FileNode
    /// How the answer says what happened (`moved`), and the structured field naming the result.
    static var done: String { get }
    static var field: String { get }
    static func operation(_ source: VirtualPath, to destination: Destination, conflict: ConflictChoice?) -> Operation
}

extension TransferTool {
    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (source, style) = try await context.path(arguments, "source")
        let destination = try await context.path(arguments, "destination").path
        let typed = try arguments.string("destination")
        let conflict = try arguments.conflict()
        let node = try await context.perform(operation(source, to: .exactly(destination, typed: typed),
                                                       conflict: conflict.map(ConflictChoice.policy)))
        let shown = "\(context.paths.display(source, style)) to \(context.paths.display(node.path, style))"
        return ToolOutput(text: "Successfully \(done) \(shown)", fields: [field: nodeJSON(node, style, context.paths)])
    }
}

struct MoveFile: TransferTool {
    static let name = "move_file", done = "moved", field = "moved"

    static func operation(_ source: VirtualPath, to destination: Destination, conflict: ConflictChoice?) -> MoveItem {
        MoveItem(source, to: destination, conflict: conflict)
    }
}

struct CopyFile: TransferTool {
    static let name = "copy_file", done = "copied", field = "copy"

    static func operation(_ source: VirtualPath, to destination: Destination, conflict: ConflictChoice?) -> CopyItem {
        CopyItem(source, to: destination, conflict: conflict)
    }
}

struct TrashFile: MCPTool {
    static let name = "trash_file"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.resolveParent(try arguments.string("path"))
        guard let outcome = try await context.perform(TrashItems([path])).first else { throw CofferError(.noSuchFile, path: path) }
        let item = try outcome.get()
        return ToolOutput(text: "Moved \(context.paths.display(path, style)) to the trash (id \(item.id))",
                          fields: ["trashId": .string(item.id), "originalPath": .string(context.paths.display(item.originalPath, style))])
    }
}

struct ListTrashTool: MCPTool {
    static let name = "list_trash"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let listing = try await context.perform(ListTrash())
        let items: [JSONValue] = listing.items.map { item in
            var entry: [String: JSONValue] = ["trashId": .string(item.id), "kind": .string(item.node.kind.rawValue),
                                              "originalPath": .string(context.paths.display(item.originalPath, .host))]
            if let date = item.deletionDate { entry["deletedAt"] = JSONValue(date) }
            if let size = item.size { entry["size"] = .integer(size) }
            return .object(entry)
        }
        let lines = listing.items.map { item in
            "\(item.id)\t\(item.deletionDate.map(Timestamp.iso8601) ?? "-")\t\(context.paths.display(item.originalPath, .host))"
        }
        var fields: [String: JSONValue] = ["items": .array(items)]
        let problems = listing.problems.map { $0.message(in: context.language) }
        if !problems.isEmpty { fields["problems"] = .array(problems.map { .string($0) }) }
        let listed = lines.isEmpty ? "The trash is empty." : lines.joined(separator: "\n")
        return ToolOutput(text: ([listed] + problems).joined(separator: "\n"), fields: fields)
    }
}

struct RestoreFile: MCPTool {
    static let name = "restore_file"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        // By where it was (`path`, or a path given as `trashId`: the obvious call after trashing
        // a path), else by its trash id or original name.
        let reference: RestoreItem.Reference
        if let path = try arguments.optionalString("path") {
            reference = .originalPath(try context.paths.resolve(path).path)  // where it was: nothing there to follow
        } else {
            let text = try arguments.string("trashId")
            reference = text.hasPrefix("/") || text.contains(":/") ? .originalPath(try context.paths.resolve(text).path) : .name(text)
        }
        let conflict = try arguments.conflict()
        let node = try await context.perform(RestoreItem(reference, conflict: conflict.map(ConflictChoice.policy)))
        return ToolOutput(text: "Restored \(context.paths.display(node.path, .host))",
                          fields: ["restored": nodeJSON(node, .host, context.paths)])
    }
}

struct ImportFiles: MCPTool {
    static let name = "import_files"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let hostPaths = try arguments.strings("hostPaths")
        var folder: (path: VirtualPath, style: PathResolver.Style)?
        if let text = try arguments.optionalString("destination") { folder = try await context.resolve(text) }
        let style = folder?.style ?? .host
        let results = try await context.perform(ImportItems(hostPaths, into: folder?.path, conflict: try arguments.conflict()))
        var lines: [String] = []
        var entries: [JSONValue] = []
        for result in results {
            var entry: [String: JSONValue] = ["hostPath": .string(result.hostPath)]
            switch result.outcome {
            case .success(let node):
                lines.append("\(result.hostPath) → \(context.paths.display(node.path, style))")
                entry["imported"] = nodeJSON(node, style, context.paths)
            case .failure(let error):
                let message = error.userMessage(in: context.language).text
                lines.append("\(result.hostPath): \(message)")
                entry["error"] = .string(message)
            }
            // What a folder's import left out is said, not dropped (as host/import says it).
            var skipped: [JSONValue] = []
            for skip in result.skipped {
                let message = skip.error.userMessage(in: context.language).text
                lines.append("  left out \(skip.hostPath): \(message)")
                skipped.append(["hostPath": .string(skip.hostPath), "error": .string(message)])
            }
            if !skipped.isEmpty { entry["skipped"] = .array(skipped) }
            entries.append(.object(entry))
        }
        return ToolOutput(text: lines.joined(separator: "\n"), fields: ["results": .array(entries)])
    }
}

struct ExportFile: MCPTool {
    static let name = "export_file"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let path = try await context.path(arguments, "path").path
        let folder = try arguments.string("hostDirectory")
        let conflict = try arguments.conflict()
        let hostPath = try await context.perform(ExportItem(path, toHostFolder: folder, conflict: conflict))
        return ToolOutput(text: "Exported to \(hostPath)", fields: ["hostPath": .string(hostPath)])
    }
}

/// `tag_files`: adds and removes tags (`user.xdg.tags`, as the desktop's file managers show them).
struct TagFiles: MCPTool {
    static let name = "tag_files"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        var paths: [VirtualPath] = [], style = PathResolver.Style.host
        for text in try arguments.strings("paths") {
            let resolved = try await context.resolve(text)
            paths.append(resolved.path)
            style = resolved.style
        }
        let adding = try arguments.optionalStrings("add"), removing = try arguments.optionalStrings("remove")
        guard !adding.isEmpty || !removing.isEmpty else {
            throw CofferError(.invalidArgument, detail: "give “add” or “remove” (or both)")
        }
        var lines: [String] = [], results: [JSONValue] = []
        for (path, outcome) in try await context.perform(TagItems(paths, adding: adding, removing: removing)) {
            let shown = context.paths.display(path, style)
            switch outcome {
            case .success(let tags):
                lines.append("\(shown): \(tags.isEmpty ? "(no tags)" : tags.joined(separator: ", "))")
                results.append(.object(["path": .string(shown), "tags": .array(tags.map(JSONValue.string))]))
            case .failure(let error):
                let message = error.userMessage(in: context.language).text
                lines.append("\(shown): Error - \(message)")
                results.append(.object(["path": .string(shown), "error": .string(message)]))
            }
        }
        return ToolOutput(text: lines.joined(separator: "\n"), fields: ["results": .array(results)])
    }
}
