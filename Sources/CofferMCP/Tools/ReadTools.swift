import CofferCore
import CofferPreview
import FileService
import Foundation

/// Reads text the way `read_text_file` promises: the encoding detected from the file (as
/// `cat` shows it: UTF-8, UTF-16 with its mark, GB18030), at most `maxInlineBytes`, the
/// first `head` or last `tail` lines, or the bytes from `offset` on.
enum TextReading {
    static func read(_ path: VirtualPath, head: Int64?, tail: Int64?, offset: Int64?, length: Int64?,
                     _ context: ToolContext) async throws(CofferError) -> TextRange {
        if head != nil && tail != nil {
            throw CofferError(.invalidArgument, detail: "give “head” or “tail”, not both")
        }
        if tail != nil && offset != nil {
            throw CofferError(.invalidArgument, detail: "give “tail” or “offset”, not both")
        }
        let limit = context.inlineLimit
        let node = try await context.perform(StatItem(path))
        guard node.kind == .file else { throw CofferError(.isADirectory, path: path) }
        guard node.special == nil else { throw CofferError(.unsupported, path: path, detail: node.special?.rawValue) }
        var start = offset ?? 0
        if tail != nil { start = max(0, node.size - Int64(limit)) }
        let wanted = min(Int(length ?? Int64(limit)), limit)
        if length == nil, head == nil, tail == nil, node.size - start > Int64(limit) {
            throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes; read it in parts with offset and length, or use head or tail")
        }
        guard case .text(var range) = try await context.perform(ReadRange(path, offset: start, length: wanted, as: .text)) else {
            throw CofferError(.unsupported, path: path)
        }
        if let head { range.text = lines(of: range.text, first: Int(head)) }
        if let tail {
            var text = range.text
            // Started inside the file: the first line is only part of one.
            if start > 0, let newline = text.firstIndex(of: "\n") { text = String(text[text.index(after: newline)...]) }
            range.text = lines(of: text, last: Int(tail))
        }
        return range
    }

    static func lines(of text: String, first count: Int) -> String {
        var end = text.startIndex
        var taken = 0
        while taken < count, end < text.endIndex {
            end = text[end...].firstIndex(of: "\n").map { text.index(after: $0) } ?? text.endIndex
            taken += 1
        }
        return String(text[..<end])
    }

    static func lines(of text: String, last count: Int) -> String {
        guard count > 0 else { return "" }
        // A final newline ends the last line; it does not start another.
        var start = text.hasSuffix("\n") ? text.index(before: text.endIndex) : text.endIndex
        for found in 1...count {
            guard let newline = text[..<start].lastIndex(of: "\n") else { return text }
            if found == count { return String(text[text.index(after: newline)...]) }
            start = newline
        }
        return text
    }

    static func output(_ range: TextRange) -> ToolOutput {
        ToolOutput(text: range.text, fields: [
            "charset": .string(range.charset.name), "size": .integer(range.size), "offset": .integer(range.offset),
            "bytesRead": .integer(Int64(range.bytesRead)), "endOfFile": .bool(range.isEndOfFile),
        ])
    }

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let path = try await context.path(arguments, "path").path
        return output(try await read(path, head: try arguments.optionalInteger("head"), tail: try arguments.optionalInteger("tail"),
                                     offset: try arguments.optionalInteger("offset"),
                                     length: try arguments.optionalInteger("length"), context))
    }
}

struct ReadTextFile: MCPTool {
    static let name = "read_text_file"
    static let answersLarge = true

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        try await TextReading.call(arguments, context)
    }
}

struct ReadMediaFile: MCPTool {
    static let name = "read_media_file"
    static let answersLarge = true

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let (path, style) = try await context.path(arguments, "path")
        let maxSize = try arguments.optionalInteger("maxSize", minimum: 16).map { Int(min($0, 4096)) }
        let node = try await context.perform(StatItem(path))
        guard node.kind == .file, node.special == nil else { throw CofferError(.isADirectory, path: path) }
        let limit = context.inlineLimit
        if let thumbnail = try await thumbnail(of: node, fitting: maxSize, limit: limit, context) {
            let text = "\(context.paths.display(path, style)): a thumbnail of \(thumbnail.width) × \(thumbnail.height) pixels "
                + "(image/png, \(thumbnail.png.count) bytes)"
            var output = ToolOutput(text: text, fields: [
                "mimeType": "image/png", "size": .integer(Int64(thumbnail.png.count)), "thumbnail": true,
                "width": .integer(Int64(thumbnail.width)), "height": .integer(Int64(thumbnail.height)),
            ], blocks: [["type": "image", "data": .string(Data(thumbnail.png).base64EncodedString()), "mimeType": "image/png"]])
            output.replacesText = true
            return output
        }
        guard node.size <= Int64(limit) else { throw CofferError(.tooLarge, path: path, detail: "\(limit) bytes") }
        guard case .bytes(let range) = try await context.perform(ReadRange(path, length: limit, as: .bytes)) else {
            throw CofferError(.unsupported, path: path)
        }
        let mime = context.service.registry.mimeType(of: node.typeIdentifier)
        let data = JSONValue.string(Data(range.bytes).base64EncodedString())
        let block: JSONValue = switch mime.split(separator: "/").first {
        case "image": ["type": "image", "data": data, "mimeType": .string(mime)]
        case "audio": ["type": "audio", "data": data, "mimeType": .string(mime)]
        default: ["type": "resource", "resource": ["uri": .string(FileURI.uri(hostPath: context.paths.display(path, .host))),
                                                   "mimeType": .string(mime), "blob": data]]
        }
        var output = ToolOutput(text: "\(context.paths.display(path, style)): \(mime), \(range.bytes.count) bytes",
                                fields: ["mimeType": .string(mime), "size": .integer(Int64(range.bytes.count)), "thumbnail": false],
                                blocks: [block])
        output.replacesText = true
        return output
    }

    /// A thumbnail to send instead of the file: for an image (or PDF) whose longest side is
    /// over `maxSize`, or whose bytes are over the inline limit (then fitting in `maxSize`,
    /// else 1024). `nil` to send the file itself.
    private static func thumbnail(of node: FileNode, fitting maxSize: Int?, limit: Int,
                                  _ context: ToolContext) async throws(CofferError) -> Thumbnail? {
        guard Previewer.offersThumbnail(node, registry: context.service.registry) else { return nil }
        let fitting = maxSize ?? ThumbnailSize.xxLarge.pixels
        if node.size <= Int64(limit) {
            guard let maxSize else { return nil }
            // A file libvips cannot read is sent as it is, as before there were thumbnails.
            let preview = try? await context.perform(PreviewItem(node.path))
            guard case .image(let image)? = preview?.details, max(image.width, image.height) > maxSize else {
                // A PDF is a document, sent as one unless it is too large to be.
                return nil
            }
        }
        return try await context.perform(MakeThumbnail(node.path, pixels: fitting))
    }
}

struct ReadMultipleFiles: MCPTool {
    static let name = "read_multiple_files"
    static let answersLarge = true

    static func call(_ arguments: Arguments, _ context: ToolContext) async throws(CofferError) -> ToolOutput {
        let paths = try arguments.strings("paths")
        var parts: [String] = []
        var entries: [JSONValue] = []
        for text in paths {
            do {
                let path = try await context.resolve(text).path
                let piece = try await TextReading.read(path, head: nil, tail: nil, offset: nil, length: nil, context)
                parts.append("\(text):\n\(piece.text)\n")
                entries.append(["path": .string(text), "content": .string(piece.text)])
            } catch {
                if error.kind == .cancelled { throw error }
                let message = error.userMessage(in: context.language).text
                parts.append("\(text): Error - \(message)")
                entries.append(["path": .string(text), "error": .string(message)])
            }
        }
        return ToolOutput(text: parts.joined(separator: "\n---\n"), fields: ["files": .array(entries)])
    }
}
