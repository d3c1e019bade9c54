/// A capability: a backend whose items are entries of folders on the local file system.
///
/// Another part of Coffer on the same device can then move an item out of the backend or
/// into it with one `rename(2)` instead of a copy: the trash puts items in and restores
/// them this way (falling back to a streamed copy when the rename answers `EXDEV`, another
/// file system). `LocalSandboxBackend` offers it; any backend that keeps its items in a
/// local folder can, by conforming.
///
/// The backend stays in charge of its confinement: it opens the folder holding `path`
/// beneath its root without following links, and the caller only works relative to that
/// descriptor, so the item it renames is the one the path names even under a race.
public protocol LocalFolderBackend: StorageBackend {
    /// Runs `body` with an open descriptor of the folder that holds the item at `path`, and
    /// the item's name in it. The descriptor belongs to the backend and is valid only while
    /// `body` runs, on the calling thread (which must not be one of Swift's cooperative pool:
    /// callers are inside `BlockingIO.run`).
    /// - Throws: what resolving the folder throws (`noSuchFile`, `outsideSandbox`…), or
    ///   `invalidOperation` for a mount's root, which has no parent inside the mount.
    func withParentFolder<T>(of path: VirtualPath,
                             _ body: (_ folder: Int32, _ name: String) throws(CofferError) -> T) throws(CofferError) -> T
}
