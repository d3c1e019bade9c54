public import CofferCore
public import FileService
import Foundation

/// `downloads --clear`, `transfers/clear`: forgets the downloads that are done or failed, with
/// any data they kept in the downloads cache, and those that did not finish and were left
/// alone for 30 days. A download paused (or cut off) more recently stays, for a resume.
public struct ClearDownloads: FileOperation {
    public static let name = "clearDownloads"
    public static let changesFiles = false

    public var store: TransferStore?

    public init(store: TransferStore? = nil) { self.store = store }

    /// - Returns: how many downloads were forgotten.
    public func run(in context: OperationContext) async throws(CofferError) -> Int {
        let store: TransferStore
        if let given = self.store { store = given } else { store = try TransferStore(of: context.service) }
        let cache = context.service.downloadsCachePath
        var cleared = store.dropStale(cache: cache)
        for record in store.all() where record.state == .done || record.state == .failed {
            store.forget(record, cache: cache)
            cleared += 1
        }
        return cleared
    }
}
