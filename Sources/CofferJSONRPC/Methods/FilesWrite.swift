import CofferCore
import FileService
import Foundation

/// `files/write`: a whole file from inline data, at most `maxInlineBytes` decoded; larger
/// files go through `files/upload/*`. Text is written as UTF-8 unless `charset` names another
/// form (`utf-16`, `gb18030`, `utf-8-bom`…: what `files/read` reported, to keep a file's own).
/// `append` adds the data at the end instead. `ifVersion` makes it a conditional save; with
/// `conflict: "ask"` too, a file changed meanwhile is asked about (`conflict/ask`, kind
/// `changedSinceRead`) when the client answers questions.
struct FilesWrite: RPCMethod {
    static let name = "files/write"
    struct Params: Decodable, Sendable {
        /// A file of a mount, or…
        var path: PathParam?
        /// …a host file opened in place (`host/open`), saved through its bookmark.
        var bookmarkId: Int?
        var data: String
        var encoding: DataEncoding?
        var conflict: ConflictParam?
        var ifVersion: VersionParam?
        var append: Bool?
        var charset: String?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> NodeResult {
        let form = try textForm(params.charset, param: "charset", data: params.encoding)
        let bytes = try decode(params.data, params.encoding ?? .text, form: form, continuing: params.append == true,
                               limit: context.inlineLimit)
        if case .bookmark(let id) = try target(path: params.path, bookmarkId: params.bookmarkId) {
            guard params.append != true else { throw RPCError.invalidParams("param “append” is for files of a mount") }
            let saved = try await context.perform(WriteHostFile(bookmark: id, bytes: try bytes.get(),
                                                                conflict: params.conflict?.choice,
                                                                ifVersion: params.ifVersion?.version))
            let registry = context.session.service.registry
            return NodeResult(hostFile: saved, type: registry.typeIdentifier(forFileNamed: HostAccess.lastComponent(of: saved.savedPath)))
        }
        // Made inside `perform`, so a bad path or too much data is audited like any failed write.
        if params.append == true {
            return NodeResult(try await context.perform(try append(params, bytes)))
        }
        return NodeResult(try await context.perform(try write(params, bytes)))
    }

    private static func write(_ params: Params, _ bytes: Result<[UInt8], CofferError>) throws(CofferError) -> WriteFile {
        let path = try params.path!.resolved()
        do {
            return WriteFile(path, bytes: try bytes.get(), conflict: params.conflict?.choice,
                             ifVersion: params.ifVersion?.version)
        } catch {
            throw error.naming(path)
        }
    }

    private static func append(_ params: Params, _ bytes: Result<[UInt8], CofferError>) throws(CofferError) -> AppendToFile {
        let path = try params.path!.resolved()
        do {
            return AppendToFile(path, bytes: try bytes.get(), ifVersion: params.ifVersion?.version)
        } catch {
            throw error.naming(path)
        }
    }
}

/// The form a text encoding param (`param`) names; `nil` (UTF-8) when there is none.
func textForm(_ name: String?, param: String, data: DataEncoding? = nil) throws(RPCError) -> TextForm? {
    guard let name else { return nil }
    guard data ?? .text == .text else { throw RPCError.invalidParams("param “\(param)” is for text data only") }
    guard let form = TextForm(name: name) else {
        throw RPCError.invalidParams("param “\(param)” must be utf-8, utf-8-bom, utf-16, utf-16le, utf-16be or gb18030")
    }
    return form
}

/// Decodes inline data: the bytes, or `tooLarge` past `limit`; base64 that is not base64
/// is a bad param.
func decode(_ text: String, _ encoding: DataEncoding, form: TextForm? = nil, continuing: Bool = false,
            limit: Int) throws(RPCError) -> Result<[UInt8], CofferError> {
    let tooLarge = Result<[UInt8], CofferError>.failure(CofferError(.tooLarge, detail: "\(limit) bytes"))
    let bytes: [UInt8]
    switch encoding {
    case .text:
        // Checked before encoding: no charset takes fewer than half the bytes of UTF-8.
        guard text.utf8.count <= limit * 2 else { return tooLarge }
        do throws(CofferError) {
            bytes = try (form ?? .utf8).encode(text, continuing: continuing)
        } catch {
            return .failure(error)
        }
    case .base64:
        // Checked before decoding: base64 is 4 characters for every 3 bytes.
        guard text.utf8.count / 4 * 3 <= limit + 3 else { return tooLarge }
        guard let data = Data(base64Encoded: text) else { throw RPCError.invalidParams("param “data” is not valid base64") }
        bytes = Array(data)
    }
    return bytes.count <= limit ? .success(bytes) : tooLarge
}
