/// A backend that keeps the versions of its files in its own storage, where copying them
/// to the container would mean downloading them: an S3 bucket keeps the content a replace
/// displaces as the bucket's own older version of the object (where the bucket's versioning
/// is on) or as a copy made on the server under a hidden prefix.
///
/// `FileService` records each version in the container's version index, with the
/// *location* this backend returns: a string only the backend reads. The service asks for
/// a version to be kept while the file is still in place, then replaces the file in one
/// write (``ConflictPolicy/replace``); if that write fails, it calls
/// ``discardKeptVersion(_:)``. A location outlives the file's moves and renames: the content
/// stays where it was kept.
public protocol VersionKeepingBackend: StorageBackend {
    /// Keeps the current content of the file at `path` as a version; the file stays.
    /// - Returns: where the version is, for the other calls.
    /// - Throws: `noSuchFile` when there is no such file; `isADirectory` for a folder;
    ///   `ioError` when the storage cannot keep it (then nothing of it is kept).
    func keepVersion(of path: VirtualPath) async throws(CofferError) -> String

    /// Drops a version just kept whose replace then failed: the file is still in place, and
    /// may still be the very content kept (which must then stay).
    func discardKeptVersion(_ location: String) async throws(CofferError)

    /// Opens the version at `location` for reading.
    /// - Throws: `noSuchFile` when it is gone; `ioError` from the storage.
    func openVersion(_ location: String) async throws(CofferError) -> any ReadableFile

    /// Deletes the version at `location` for good (a pruning, an emptied trash). Content
    /// that is a file's current content is never deleted.
    /// - Throws: `ioError` from the storage.
    func deleteVersion(_ location: String) async throws(CofferError)

    /// Those of `locations` that are the current content of a file: keeps whose replace never
    /// happened, which are no earlier versions.
    func currentContents(among locations: [String]) async -> Set<String>
}
