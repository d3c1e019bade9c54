public import CofferCore
import Foundation

/// A backend whose items are files of this computer under one root, reached through folder
/// descriptors (the local sandbox). Copies in the kernel and imports that take host files
/// without a stream ask a backend for this capability, never for a concrete type.
protocol DescriptorTree: StorageBackend {
    /// Opens the folder that holds `path`'s item, below the root and never through a link.
    func openParent(of path: VirtualPath) throws(CofferError) -> Descriptor
    /// A host file written at `path` whole, in one hand-over to a blocking thread.
    func receive(_ source: Descriptor, reportingAs item: String, at path: VirtualPath, permissions: UInt16,
                 modificationDate: Date, conflict: ConflictPolicy, progress: ProgressReporter) async throws(CofferError)
    /// Host files written into `folder`, a folder being built, in one hand-over; those failing
    /// with an error of a kind in `skipping` are left out and returned by their index.
    func receive(_ files: [ReceivedHostFile], into folder: VirtualPath, skipping: Set<CofferError.Kind>,
                 progress: ProgressReporter) async throws(CofferError) -> [(index: Int, error: CofferError)]
}

/// A host file to be written by ``DescriptorTree/receive(_:into:skipping:progress:)``.
struct ReceivedHostFile {
    var source: Descriptor
    /// The host path errors and lost attributes are reported with.
    var item: String
    var name: String
    var permissions: UInt16
    var modificationDate: Date
}

/// A backend that can take a file of another backend by renaming it, without a copy.
public protocol AdoptingBackend: StorageBackend {
    /// Moves the file at `source` of `other` to `destination` here by a rename, never
    /// overwriting unless `conflict` is `.replace`. `false`, with nothing changed, when it
    /// cannot be done so (another file system, another kind of backend): then copy.
    func adoptItem(from other: any StorageBackend, at source: VirtualPath, to destination: VirtualPath,
                   conflict: ConflictPolicy) async throws(CofferError) -> Bool
}

extension LocalSandboxBackend: DescriptorTree, AdoptingBackend {}
