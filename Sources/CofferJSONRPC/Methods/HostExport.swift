import CofferCore
import FileService

/// `host/export`: a copy out to an allowed host folder (``ExportItem``); the source stays.
struct HostExport: RPCMethod {
    static let name = "host/export"
    struct Params: Decodable, Sendable {
        var path: PathParam
        var hostDirectory: String
        var conflict: ConflictPolicy?
        /// For a text file: the encoding of the copy (`utf-8`, `utf-8-bom`, `utf-16`, `gb18030`…).
        var encoding: String?
        var workDoneToken: ProgressToken?
    }
    struct Result: Encodable, Sendable { var hostPath: String }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let encoding = try textForm(params.encoding, param: "encoding")
        return Result(hostPath: try await context.perform(ExportItem(try params.path.resolved(), toHostFolder: params.hostDirectory,
                                                                     conflict: params.conflict, encoding: encoding)))
    }
}
