import CofferCore
import FileService

struct ListVersionsTool: MCPTool {
    static let name = "list_versions"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        let versions = try await context.perform(ListVersions(path))
        let entries: [JSONValue] = versions.map { version in
            var entry: [String: JSONValue] = ["id": .integer(Int64(version.id)), "date": JSONValue(version.date),
                                              "size": .integer(version.size), "keptAt": JSONValue(version.keptAt)]
            if let frontEnd = version.frontEnd { entry["by"] = .string(frontEnd) }
            return .object(entry)
        }
        let shown = context.paths.display(path, style)
        let lines = versions.map { version in
            "\(version.id)\t\(Timestamp.iso8601(version.date))\t\(version.size) bytes\t\(version.frontEnd ?? "-")"
        }
        return ToolOutput(text: lines.isEmpty ? "\(shown) has no versions." : "Versions of \(shown), newest first:\n" + lines.joined(separator: "\n"),
                          fields: ["versions": .array(entries)])
    }
}

struct RestoreVersionTool: MCPTool {
    static let name = "restore_version"

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        guard let id = try arguments.optionalInteger("id", minimum: 1) else {
            throw CofferError(.invalidArgument, detail: "“id” is missing")
        }
        let node = try await context.perform(RestoreVersion(Int(id), of: path, as: try arguments.optionalString("as")))
        return ToolOutput(text: "Restored version \(id) of \(context.paths.display(path, style)) to \(context.paths.display(node.path, style)); what was there is kept as a version.",
                          fields: ["restored": nodeJSON(node, style, context.paths)])
    }
}
