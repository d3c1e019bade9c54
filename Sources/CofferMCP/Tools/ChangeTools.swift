import CofferCore
import FileService
import Foundation

/// A node as tools show it, its path written as the request wrote paths.
func nodeJSON(_ node: FileNode, _ style: PathResolver.Style, _ paths: PathResolver) -> JSONValue {
    var object: [String: JSONValue] = [
        "path": .string(paths.display(node.path, style)), "name": .string(node.name), "kind": .string(node.kind.rawValue),
        "modified": JSONValue(node.modificationDate),
    ]
    if let size = node.contentSize { object["size"] = .integer(size) }
    return .object(object)
}

struct WriteFileTool: MCPTool {
    static let name = "write_file"
    static let title = "Write file"
    static let description = """
        Write a text file (UTF-8). It appears only when complete. An existing file is replaced, as the reference \
        server does, unless conflict is "fail" or "keepBoth"; with append the text is added at the end instead \
        (the file is made when there is none).
        """
    static let input = Schema.Object([
        "path": Schema.path,
        "content": Schema.string("The text to write."),
        "conflict": Schema.oneOf(["fail", "keepBoth", "replace"],
                                 "When the file exists: replace it (the default), fail, or keepBoth (write under a new name)."),
        "append": Schema.boolean("Add the text at the end of the file instead of replacing it."),
    ], required: ["path", "content"])
    static let output: [String: JSONValue] = ["file": Schema.node]
    static let annotations = Annotations(readOnly: false, destructive: true, idempotent: true)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try context.path(arguments, "path")
        let bytes = Array(try arguments.string("content").utf8)
        let limit = context.limits.maxInlineBytes
        guard bytes.count <= limit else { throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes") }
        let node: FileNode
        if try arguments.bool("append") {
            if arguments.values["conflict"] != nil, arguments.values["conflict"] != .null {
                throw CofferError(.invalidArgument, detail: "“conflict” does not go with “append”")
            }
            node = try await context.perform(AppendToFile(path, bytes: bytes))
        } else {
            let conflict = try arguments.conflict(default: .replace)
            node = try await context.perform(WriteFile(path, bytes: bytes, conflict: .policy(conflict)))
        }
        return ToolOutput(text: "Successfully wrote to \(context.paths.display(node.path, style))",
                          fields: ["file": nodeJSON(node, style, context.paths)])
    }
}

struct CreateDirectory: MCPTool {
    static let name = "create_directory"
    static let title = "Create directory"
    static let description = "Create a folder, and any missing folders above it. A folder that exists already is fine."
    static let input = Schema.Object(["path": Schema.path], required: ["path"])
    static let output: [String: JSONValue] = ["folder": Schema.node]
    static let annotations = Annotations(readOnly: false, destructive: false, idempotent: true)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try context.path(arguments, "path")
        let node = try await context.perform(CreateFolder(path, intermediates: true))
        return ToolOutput(text: "Successfully created directory \(context.paths.display(path, style))",
                          fields: ["folder": nodeJSON(node, style, context.paths)])
    }
}

/// `move_file` and `copy_file`: `destination` is the new path itself.
enum Transfer {
    static let input = Schema.Object([
        "source": Schema.path,
        "destination": Schema.string("The new path (not the folder it goes into)."),
        "conflict": Schema.conflict,
    ], required: ["source", "destination"])

    static func paths(_ arguments: Arguments, _ context: ToolContext) throws(CofferError)
        -> (source: VirtualPath, destination: VirtualPath, style: PathResolver.Style, conflict: ConflictPolicy)
    {
        let (source, style) = try context.path(arguments, "source")
        let destination = try context.path(arguments, "destination").path
        return (source, destination, style, try arguments.conflict(default: .fail))
    }
}

struct MoveFile: MCPTool {
    static let name = "move_file"
    static let title = "Move file"
    static let description = """
        Move or rename a file or folder, within a mount or across mounts. It never replaces what is at the \
        destination unless conflict is "replace", which removes what was there.
        """
    static let input = Transfer.input
    static let output: [String: JSONValue] = ["moved": Schema.node]
    /// Destructive: with conflict "replace" it removes what was at the destination.
    static let annotations = Annotations(readOnly: false, destructive: true, idempotent: false)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (source, destination, style, conflict) = try Transfer.paths(arguments, context)
        let node = try await context.perform(MoveItem(source, to: .exactly(destination), conflict: .policy(conflict)))
        return ToolOutput(text: "Successfully moved \(context.paths.display(source, style)) to \(context.paths.display(node.path, style))",
                          fields: ["moved": nodeJSON(node, style, context.paths)])
    }
}

struct CopyFile: MCPTool {
    static let name = "copy_file"
    static let title = "Copy file"
    static let description = """
        Copy a file or folder to a new path, within a mount or across mounts, with progress. Nothing is left half \
        copied if it fails or is cancelled; it never replaces what is there unless conflict is "replace", which \
        removes what was there.
        """
    static let input = Transfer.input
    static let output: [String: JSONValue] = ["copy": Schema.node]
    static let annotations = Annotations(readOnly: false, destructive: true, idempotent: false)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (source, destination, style, conflict) = try Transfer.paths(arguments, context)
        let node = try await context.perform(CopyItem(source, to: .exactly(destination), conflict: .policy(conflict)))
        return ToolOutput(text: "Successfully copied \(context.paths.display(source, style)) to \(context.paths.display(node.path, style))",
                          fields: ["copy": nodeJSON(node, style, context.paths)])
    }
}

struct TrashFile: MCPTool {
    static let name = "trash_file"
    static let title = "Move to trash"
    static let description = """
        Move a file or folder to the trash. Nothing is deleted: list_trash shows it and restore_file puts it back. \
        (There is no tool that deletes for good.)
        """
    static let input = Schema.Object(["path": Schema.path], required: ["path"])
    static let output: [String: JSONValue] = [
        "trashId": Schema.string("Its id in the trash, for restore_file."),
        "originalPath": Schema.string("Where it was."),
    ]
    static let annotations = Annotations(readOnly: false, destructive: false, idempotent: false)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try context.path(arguments, "path")
        guard let outcome = try await context.perform(TrashItems([path])).first else { throw CofferError(.noSuchFile, path: path) }
        let item = try outcome.get()
        return ToolOutput(text: "Moved \(context.paths.display(path, style)) to the trash (id \(item.id))",
                          fields: ["trashId": .string(item.id), "originalPath": .string(context.paths.display(item.originalPath, style))])
    }
}

struct ListTrashTool: MCPTool {
    static let name = "list_trash"
    static let title = "List trash"
    static let description = "What is in the trash, oldest first: each item's id, where it was and when it was trashed."
    static let input = Schema.Object([:])
    static let output: [String: JSONValue] = [
        "items": Schema.array(of: Schema.object([
            "trashId": Schema.string("Its id, for restore_file."),
            "originalPath": Schema.string("Where it was."),
            "deletedAt": Schema.string("When it was trashed (ISO 8601), when known."),
            "kind": Schema.string("file, folder or package."),
            "size": Schema.integer("Bytes, for a file."),
        ], required: ["trashId", "originalPath", "kind"]), "The items, oldest first."),
    ]
    static let annotations = Annotations.reads

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
        return ToolOutput(text: lines.isEmpty ? "The trash is empty." : lines.joined(separator: "\n"), fields: ["items": .array(items)])
    }
}

struct RestoreFile: MCPTool {
    static let name = "restore_file"
    static let title = "Restore from trash"
    static let description = """
        Put an item from the trash back where it was, by its trash id (or its original name when only one item \
        has it). It fails when the place is taken, unless conflict says otherwise (replace trashes what is there).
        """
    static let input = Schema.Object([
        "trashId": Schema.string("The item's id from list_trash, or its original name."),
        "conflict": Schema.conflict,
    ], required: ["trashId"])
    static let output: [String: JSONValue] = ["restored": Schema.node]
    static let annotations = Annotations(readOnly: false, destructive: false, idempotent: false)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let reference = try arguments.string("trashId")
        let conflict = try arguments.conflict(default: .fail)
        let node = try await context.perform(RestoreItem(.name(reference), conflict: .policy(conflict)))
        return ToolOutput(text: "Restored \(context.paths.display(node.path, .host))",
                          fields: ["restored": nodeJSON(node, .host, context.paths)])
    }
}

struct ImportFiles: MCPTool {
    static let name = "import_files"
    static let title = "Import host files"
    static let description = """
        Copy files or folders from the host into Coffer (files:/Import unless a folder is named). Only host \
        folders allowed with --allow-host or offered by the client as roots can be read, never Coffer's own.
        """
    static let input = Schema.Object([
        "hostPaths": Schema.strings("Host paths of the files or folders to copy in."),
        "destination": Schema.string("The Coffer folder they go into (default files:/Import)."),
        "conflict": Schema.conflict,
    ], required: ["hostPaths"])
    static let output: [String: JSONValue] = [
        "results": Schema.array(of: Schema.object([
            "hostPath": Schema.string("The host path as given."),
            "imported": Schema.any("Where it went, when it was copied in."),
            "error": Schema.string("Why it was not."),
        ], required: ["hostPath"]), "One result per host path."),
    ]
    static let annotations = Annotations(readOnly: false, destructive: true, idempotent: false)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let hostPaths = try arguments.strings("hostPaths")
        let folder = try arguments.optionalString("destination").map { (text) throws(CofferError) in try context.paths.resolve(text) }
        let style = folder?.style ?? .host
        let results = try await context.perform(ImportItems(hostPaths, into: folder?.path, conflict: try arguments.conflict(default: .keepBoth)))
        var lines: [String] = []
        var entries: [JSONValue] = []
        for result in results {
            switch result.outcome {
            case .success(let node):
                lines.append("\(result.hostPath) → \(context.paths.display(node.path, style))")
                entries.append(["hostPath": .string(result.hostPath), "imported": nodeJSON(node, style, context.paths)])
            case .failure(let error):
                let message = error.userMessage(in: context.language).text
                lines.append("\(result.hostPath): \(message)")
                entries.append(["hostPath": .string(result.hostPath), "error": .string(message)])
            }
        }
        return ToolOutput(text: lines.joined(separator: "\n"), fields: ["results": .array(entries)])
    }
}

struct ExportFile: MCPTool {
    static let name = "export_file"
    static let title = "Export to host"
    static let description = """
        Copy a file or folder out of Coffer into a host folder allowed with --allow-host or offered by the client \
        as a root. The original stays; a name taken in the host folder gets a new one unless conflict says otherwise.
        """
    static let input = Schema.Object([
        "path": Schema.path,
        "hostDirectory": Schema.string("The host folder to copy it into."),
        "conflict": Schema.conflict,
    ], required: ["path", "hostDirectory"])
    static let output: [String: JSONValue] = ["hostPath": Schema.string("Where the copy is on the host.")]
    static let annotations = Annotations(readOnly: false, destructive: true, idempotent: false)

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let path = try context.path(arguments, "path").path
        let folder = try arguments.string("hostDirectory")
        let conflict: ConflictPolicy? = arguments.values["conflict"] == nil ? nil : try arguments.conflict(default: .keepBoth)
        let hostPath = try await context.perform(ExportItem(path, toHostFolder: folder, conflict: conflict))
        return ToolOutput(text: "Exported to \(hostPath)", fields: ["hostPath": .string(hostPath)])
    }
}
