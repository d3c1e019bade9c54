import CofferCore
import FileService

/// `files/copy`: into `toDirectory` (``CopyItem``: keeps both names by default); progress
/// with a token.
struct FilesCopy: RPCMethod {
    static let name = "files/copy"

    static func run(_ params: TransferParams, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(CopyItem(try params.path.resolved(), to: .into(try params.toDirectory.resolved()),
                                                      conflict: params.conflict?.choice)))
    }
}

/// The params of `files/move` and `files/copy`: an item, the folder it goes into, and how
/// a name already there is handled.
struct TransferParams: Decodable, Sendable {
    var path: PathParam
    var toDirectory: PathParam
    var conflict: ConflictParam?
    var workDoneToken: ProgressToken?
}
