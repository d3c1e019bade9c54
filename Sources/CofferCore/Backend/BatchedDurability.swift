/// Files written inside a folder that is itself not yet visible (a folder copy built under a
/// partial name) need not be synced one by one: nothing of them can be seen until the folder
/// is placed, so one flush of the whole file system just before that keeps the guarantee —
/// nothing visible until durable — at the cost of one sync instead of one per file.
///
/// Whoever builds such a folder runs the writes with ``deferred`` set, then asks the backend
/// to make the folder durable (``DurableFolderBackend``) before it places it.
public enum BatchedDurability {
    /// Whether writes made now may leave their sync to the folder they are in.
    @TaskLocal public static var deferred = false
}

/// A backend that can make a whole folder durable at once (a local file system: `syncfs`).
///
/// With it, imports and folder copies built under a partial name sync once, just before the
/// folder is placed, instead of once per file (``BatchedDurability``). Without it, each write
/// is made durable at its own commit.
public protocol DurableFolderBackend: StorageBackend {
    /// Makes everything written below `path` durable.
    /// - Throws: `noSuchFile` when there is no such folder; `ioError` when the store cannot
    ///   make it durable (then the caller does not place the folder).
    func makeDurable(_ path: VirtualPath) async throws
}
