import CofferCore
import CofferTransfers
import FileService

/// `transfers/upload`: each file sent to `url` (``UploadFile``), one result per file.
struct TransfersUpload: RPCMethod {
    static let name = "transfers/upload"
    struct Params: Decodable, Sendable {
        var paths: [PathParam]
        var url: String
        var field: String?
        var form: [String: String]?
        var asciiNameField: String?
        var put: Bool?
        var workDoneToken: ProgressToken?
    }
    struct Item: Encodable, Sendable {
        struct Failure: Encodable, Sendable { var kind: String; var message: String }
        var path: String
        var status: Int?
        var answer: String?
        var error: Failure?
    }
    struct Result: Encodable, Sendable { var results: [Item] }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        var form = UploadForm()
        if let field = params.field { form.field = field }
        form.fields = (params.form ?? [:]).sorted { $0.key < $1.key }.map { UploadForm.Field($0.key, $0.value) }
        form.asciiNameField = params.asciiNameField
        form.put = params.put ?? false
        var results: [Item] = []
        for path in params.paths {
            do throws(CofferError) {
                let sent = try await context.perform(UploadFile(try path.resolved(), to: params.url, form: form))
                results.append(Item(path: sent.path.description, status: sent.status, answer: String(sent.answer.prefix(4096))))
            } catch where error.kind == .cancelled {
                throw error
            } catch {
                results.append(Item(path: path.text, error: Item.Failure(kind: error.kind.identifier,
                                                                          message: error.userMessage(in: context.language).text)))
            }
        }
        return Result(results: results)
    }
}
