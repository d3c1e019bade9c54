import Foundation

/// What `tools/list` shows of each tool, read once from `tools.json`: its title, description,
/// annotations, and its arguments' and result's properties, made into JSON Schema 2020-12
/// (`"#name"` in the file stands for `definitions[name]`). The result's schema always has
/// `content`, the text of the content block. An entry with `aliasOf` lists another tool's
/// schemas under an old name (`read_file`). A test checks that every entry has a tool and
/// every tool an entry.
enum ToolCatalog {
    struct Entry: Sendable {
        var name: String
        /// The tool that answers: the entry's own name, or the one it is an alias of.
        var tool: String
        /// The listing without its output schema (the default, lean list).
        var listing: JSONValue
        var outputSchema: JSONValue

        /// The listing, with its output schema when `structured`.
        func listing(structured: Bool) -> JSONValue {
            guard structured, case .object(var members) = listing else { return listing }
            members["outputSchema"] = outputSchema
            return .object(members)
        }
    }

    static let dialect = "https://json-schema.org/draft/2020-12/schema"

    static let entries: [Entry] = {
        guard let document = try? JSONDecoder().decode(JSONValue.self, from: Data(PackageResources.tools_json)),
              let definitions = document["definitions"]?.object, let tools = document["tools"]?.array else {
            fatalError("tools.json is part of the package and valid")
        }
        func expand(_ value: JSONValue) -> JSONValue {
            switch value {
            case .string(let text) where text.hasPrefix("#"): return expand(definitions[String(text.dropFirst())] ?? .null)
            case .object(let members): return .object(members.mapValues(expand))
            case .array(let items): return .array(items.map(expand))
            default: return value
            }
        }
        // JSON Schema 2020-12, MCP's default dialect: no `$schema` to repeat in every listing,
        // and extra members allowed, as JSON Schema has them by default.
        func schema(_ properties: JSONValue?, required: JSONValue) -> JSONValue {
            var schema: [String: JSONValue] = ["type": "object", "properties": expand(properties ?? [:])]
            if required.array?.isEmpty == false { schema["required"] = required }
            return .object(schema)
        }
        let byName = Dictionary(tools.compactMap { tool in tool["name"]?.string.map { ($0, tool) } }, uniquingKeysWith: { first, _ in first })
        return tools.compactMap { entry -> Entry? in
            guard let name = entry["name"]?.string else { return nil }
            let target = entry["aliasOf"]?.string ?? name
            guard let tool = byName[target], let title = entry["title"], let annotations = tool["annotations"] else { return nil }
            var output = tool["output"]?.object ?? [:]
            output["content"] = ["type": "string", "description": "The result as text, as the content block shows it."]
            // Hints as MCP defines them, each given only where it differs from its default
            // (readOnly false, destructive true, idempotent false, openWorld true).
            var hints: [String: JSONValue] = [:]
            let readOnly = annotations["readOnly"]?.bool ?? false
            if readOnly { hints["readOnlyHint"] = true }
            if !readOnly, !(annotations["destructive"]?.bool ?? false) { hints["destructiveHint"] = false }
            if !readOnly, annotations["idempotent"]?.bool == true { hints["idempotentHint"] = true }
            if !(annotations["openWorld"]?.bool ?? false) { hints["openWorldHint"] = false }
            let listing: JSONValue = [
                "name": .string(name), "title": title, "description": entry["description"] ?? "",
                "inputSchema": schema(tool["input"]?["properties"], required: tool["input"]?["required"] ?? []),
                "annotations": .object(hints),
            ]
            return Entry(name: name, tool: target, listing: listing, outputSchema: schema(.object(output), required: ["content"]))
        }
    }()
}
