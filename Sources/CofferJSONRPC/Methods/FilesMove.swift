import CofferCore
import FileService

/// `files/move`: into `toDirectory`, under the same name (``MoveItem``: across mounts it
/// copies, then removes the source once the copy is in place; conflicts fail unless asked).
struct FilesMove: RPCMethod {
    static let name = "files/move"

    static func run(_ params: TransferParams, _ context: RequestContext) async throws -> NodeResult {
        NodeResult(try await context.perform(MoveItem(try params.path.resolved(), to: .into(try params.toDirectory.resolved()),
                                                      conflict: params.conflict?.choice)))
    }
}
