import CofferCore
import CofferPreview
import FileService
import Foundation

/// `files/preview`: what a file is before it is opened — its node, its kind (`image`,
/// `document`, `text`, `archive`, `none`) and the facts for that kind (``PreviewItem``).
struct FilesPreview: RPCMethod {
    static let name = "files/preview"
    struct Params: Decodable, Sendable { var path: PathParam }
    struct Result: Encodable, Sendable {
        var node: NodeResult
        var kind: String
        var image: ImageFacts?
        var document: DocumentFacts?
        var text: TextFacts?
        var archive: ArchiveFacts?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let preview = try await context.perform(PreviewItem(try params.path.resolved()))
        var result = Result(node: NodeResult(preview.node), kind: preview.details.kind)
        switch preview.details {
        case .image(let facts): result.image = facts
        case .document(let facts): result.document = facts
        case .text(let facts): result.text = facts
        case .archive(let facts): result.archive = facts
        case .none: break
        }
        return result
    }
}

/// `files/thumbnail`: a PNG of an image or a PDF's first page fitting in `size` × `size`
/// (128 unless given; 128, 256, 512 and 1024 are cached), in base64, at most `maxInlineBytes`.
struct FilesThumbnail: RPCMethod {
    static let name = "files/thumbnail"
    struct Params: Decodable, Sendable {
        var path: PathParam
        var size: Int?
    }
    struct Result: Encodable, Sendable {
        var path: String
        var size: Int
        var width: Int
        var height: Int
        var mimeType = "image/png"
        var data: String
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let path = try params.path.resolved()
        let size = params.size ?? ThumbnailSize.normal.pixels
        guard (1...4096).contains(size) else { throw RPCError.invalidParams("param “size” must be 1 to 4096 pixels") }
        let thumbnail = try await context.withLargeAnswer { try await context.perform(MakeThumbnail(path, pixels: size)) }
        let limit = context.inlineLimit
        guard thumbnail.png.count <= limit else {
            throw RPCError.invalidParams("the thumbnail at “size” \(size) has \(thumbnail.png.count) bytes, over "
                                         + "maxInlineBytes (\(limit)); ask a smaller size")
        }
        return Result(path: path.description, size: size, width: thumbnail.width, height: thumbnail.height,
                      data: Data(thumbnail.png).base64EncodedString())
    }
}
