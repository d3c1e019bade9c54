import CofferCore
import FileService
import Foundation

/// `files/read`: a range of a file, as base64 or as text in its detected encoding.
///
/// At most `maxInlineBytes` per call. As text, a character cut at the end of the range is
/// left out, and `bytes` says how far the text reaches, so the next read starts at
/// `offset + bytes`.
struct FilesRead: RPCMethod {
    static let name = "files/read"
    struct Params: Decodable, Sendable {
        /// A file of a mount, or…
        var path: PathParam?
        /// …a host file opened in place (`host/open`).
        var bookmarkId: Int?
        var offset: Int64?
        var length: Int?
        var encoding: DataEncoding?
    }
    struct Result: Encodable, Sendable {
        var data: String
        var encoding: String
        var charset: String?
        var offset: Int64
        var bytes: Int
        var size: Int64
        var eof: Bool
        /// The version of the file read: `ifVersion` for a save that must replace just this.
        var version: String?
        /// Text only: the file starts with a byte-order mark (left out of `data`).
        var bom: Bool?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        try await context.withLargeAnswer { try await read(params, context) }
    }

    private static func read(_ params: Params, _ context: RequestContext) async throws -> Result {
        let offset = params.offset ?? 0
        let length = min(params.length ?? context.inlineLimit, context.inlineLimit)
        guard offset >= 0 else { throw RPCError.invalidParams("param “offset” must not be negative") }
        guard length >= 0 else { throw RPCError.invalidParams("param “length” must not be negative") }
        let form: ReadRange.Form = params.encoding == .text ? .text : .bytes
        let content: ReadRange.Content
        switch try target(path: params.path, bookmarkId: params.bookmarkId) {
        case .file(let path): content = try await context.perform(ReadRange(path, offset: offset, length: length, as: form))
        case .bookmark(let id): content = try await context.perform(ReadBookmark(bookmark: id, offset: offset, length: length, as: form))
        }
        switch content {
        case .bytes(let range):
            return Result(data: Data(range.bytes).base64EncodedString(), encoding: "base64", charset: nil,
                          offset: offset, bytes: range.bytes.count, size: range.size, eof: range.isEndOfFile,
                          version: range.version?.token)
        case .text(let range):
            return Result(data: range.text, encoding: "text", charset: range.charset.name, offset: offset,
                          bytes: range.bytesRead, size: range.size, eof: range.isEndOfFile,
                          version: range.version?.token, bom: range.hasByteOrderMark)
        }
    }
}

/// What `path` or `bookmarkId` names: exactly one of them.
func target(path: PathParam?, bookmarkId: Int?) throws -> EditTarget {
    switch (path, bookmarkId) {
    case (let path?, nil): return .file(try path.resolved())
    case (nil, let id?): return .bookmark(id)
    default: throw RPCError.invalidParams("give either param “path” or param “bookmarkId”")
    }
}
