public import Foundation

/// A backend that keeps its own trash on its own storage, as the freedesktop.org
/// specification does for other volumes (`$topdir/.Trash-$uid`): trashing, restoring and
/// emptying stay on that storage, so nothing crosses a network on the way (an S3 bucket's
/// trash is a prefix of the bucket, and an item goes there by a copy on the server).
///
/// The service lists these trashes beside the container's own and names their items
/// `MOUNT/ID` (a name cannot hold `/`, so the two never clash); a backend deals in its own
/// `ID`s, names in its trash, unique there.
///
/// Without it, trashing an item of the mount copies it into the container's trash (or, for a
/// ``LocalFolderBackend`` on the same file system, renames it there).
public protocol TrashKeepingBackend: StorageBackend {
    /// Moves each item to this backend's trash; each gets its own result, in the order of
    /// `paths`: the ``TrashItem``, or `noSuchFile`, `invalidOperation` (the root), `readOnly`,
    /// `ioError`.
    func trash(_ paths: [VirtualPath]) async -> [Result<TrashItem, CofferError>]

    /// This backend's trashed items whose original place is in this mount (named `mount`),
    /// oldest first.
    /// - Throws: `noPermission`, `ioError` when the trash cannot be read.
    func trashListing(mount: String) async throws(CofferError) -> TrashListing

    /// The trashed item `id`, of the mount named `mount`.
    /// - Throws: `noSuchFile` when this trash has no such item.
    func trashedItem(_ id: String, mount: String) async throws(CofferError) -> TrashItem

    /// Puts the trashed item `id` at `target` (a path of this mount whose parent exists).
    /// - Throws: `fileExists` when something is at `target` (nothing changes); `noSuchFile`
    ///   when there is no such trashed item, or no folder for `target`; `ioError`.
    func restoreTrashed(_ id: String, to target: VirtualPath) async throws(CofferError)

    /// Deletes for good what was trashed from the mount named `mount` before `cutoff`
    /// (everything when `nil`).
    /// - Returns: how many items were deleted.
    /// - Throws: `noPermission`, `ioError` when the trash cannot be read or changed.
    func emptyTrash(mount: String, olderThan cutoff: Date?) async throws(CofferError) -> Int

    /// Deletes the trashed item `id` for good: its content, then its information.
    /// - Throws: `noSuchFile` when this trash has no such item.
    func deleteTrashed(_ id: String) async throws(CofferError)
}

/// A backend whose own trash can take a copy of a file while the file stays — for storage
/// where a replace is one atomic write (an S3 `PUT`) but a move is not: before the write
/// replaces the file, the service keeps a copy of it in the trash, and drops that copy
/// again if the write is refused. At every moment the old file is at its place, in the
/// trash, or both.
///
/// With it, `FileService` asks the backend to ``ConflictPolicy/replace`` a file (after putting
/// a copy in the trash) instead of moving the old file away first.
public protocol TrashCopyingBackend: TrashKeepingBackend {
    /// Puts a copy of the file at `path` in this backend's trash; the file stays.
    /// - Throws: `noSuchFile` when there is no such file; `isADirectory` for a folder;
    ///   `ioError` when the copy fails (then the trash holds nothing of it).
    func trashCopy(of path: VirtualPath) async throws(CofferError) -> TrashItem

    /// Removes from the trash a copy that ``trashCopy(of:)`` made, whose file stayed where it was.
    /// - Throws: `ioError` when the copy cannot be removed.
    func discardTrashCopy(_ id: String) async throws(CofferError)
}
