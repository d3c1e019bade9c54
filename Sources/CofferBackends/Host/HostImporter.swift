import CCofferSystem
public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Copies host files and folders into any backend (seed 001 §2.2: the picker hands over a
/// temporary copy; move it into the sandbox at once, under a name that does not clash).
///
/// A file is written through the backend's ``PendingWrite``, so it appears only complete;
/// into the local sandbox the bytes move with `copy_file_range`. A folder is built under a
/// hidden temporary name beside its destination and moved into place at the end; a failed
/// or cancelled import removes it. The host side is only ever read.
///
/// Inside a folder, an entry that cannot be imported (unreadable, of a type not allowed,
/// a pipe, a link to a folder or to a place the policy forbids) is left out and reported;
/// running out of space or being cancelled ends the whole item.
public struct HostImporter: Sendable {
    public let policy: HostAccessPolicy
    public let registry: TypeRegistry
    /// Types by conformance; empty admits everything.
    public let allowedTypes: [String]
    public let progress: ProgressReporter

    public init(policy: HostAccessPolicy, registry: TypeRegistry, allowedTypes: [String], progress: ProgressReporter) {
        self.policy = policy
        self.registry = registry
        self.allowedTypes = allowedTypes
        self.progress = progress
    }

    /// Bytes per read when the destination is not the local sandbox.
    static let chunkSize = 1 << 20

    // MARK: Types

    /// Refuses a file, or a package, whose type the filter does not admit.
    public func checkType(of item: HostItem) throws(CofferError) {
        guard !allowedTypes.isEmpty else { return }
        let type: String
        if item.isFolder {
            type = registry.typeIdentifier(forFolderNamed: item.name)
            // A plain folder is walked, and its files are filtered one by one.
            if type == FileType.Identifier.folder { return }
        } else {
            type = item.assessedType(in: registry).effective
        }
        guard registry.admits(type, allowed: allowedTypes) else {
            throw CofferError(.typeNotAllowed, detail: type)
        }
    }

    // MARK: Measuring

    /// Bytes and items an import of `item` will copy, for progress.
    public func measure(_ item: HostItem) async -> (bytes: Int64, items: Int) {
        guard item.isFolder else { return (item.size, 1) }
        // The folder itself is one item more, as local copies count it.
        let folder = item.descriptor
        let (bytes, items) = (try? await BlockingIO.run { _ throws(CofferError) in TreeCopier.measure(folder) }) ?? (0, 0)
        return (bytes, items + 1)
    }

    // MARK: Copying

    /// Copies `item` to `destination` in `backend`, which must not exist unless `conflict`
    /// is `.replace`. Returns what was left out inside a folder.
    public func copy(_ item: HostItem, to backend: any StorageBackend, at destination: VirtualPath,
                     conflict: ConflictPolicy) async throws(CofferError) -> [ImportSkip] {
        do {
            if !item.isFolder {
                try await copyFile(item, to: backend, at: destination, conflict: conflict)
                return []
            }
            guard let parent = destination.parent else { throw CofferError(.invalidOperation, path: destination) }
            let temporary = parent.appending(trustedName: PartialName.make())
            try await backend.createFolder(at: temporary)
            await carryAttributes(of: item, to: backend, at: temporary)
            do {
                var skipped: [ImportSkip] = []
                let filtering = !allowedTypes.isEmpty && !registry.isPackage(folderNamed: item.name)
                // Nothing below the partial folder is visible: its files are made durable
                // together, once, just before it is placed (``BatchedDurability``).
                // A folder inside one being built is made durable with the outer one.
                let batched = BatchedDurability.deferred ? nil : backend as? any DurableFolderBackend
                try await BatchedDurability.$deferred.withValue(BatchedDurability.deferred || batched != nil) { () async throws in
                    try await copyContents(of: item, to: backend, at: temporary, filtering: filtering, skipped: &skipped)
                }
                try Task.checkCancellation()
                try await batched?.makeDurable(temporary)
                try await backend.moveItem(at: temporary, to: destination, conflict: conflict)
                progress.advance(items: 1)
                return skipped
            } catch {
                try? await backend.removeItem(at: temporary)
                throw error
            }
        } catch {
            throw CofferError.wrapping(error, path: destination).namingPartial(as: destination)
        }
    }

    /// Copies what `folder` holds into `destination`. Entries are opened a chunk at a time and
    /// let go as soon as they are copied, and a folder is opened only when its turn comes: an
    /// import holds at most ``batchSize`` descriptors (and one per level of folders), whatever
    /// the size of the tree, so no folder is too big for the limit of open files.
    private func copyContents(of folder: HostItem, to backend: any StorageBackend, at destination: VirtualPath,
                              filtering: Bool, skipped: inout [ImportSkip]) async throws {
        let names = try await BlockingIO.run { _ throws(CofferError) in try folder.descriptor.rawEntryNames(reporting: nil) }
        // Into a local folder being built, files go over in batches (``receive(_:into:at:skipped:)``).
        let batching = BatchedDurability.deferred ? backend as? any DescriptorTree : nil
        var batch: [ReceivedHostFile] = []
        var start = 0
        while start < names.count {
            let chunk = names[start..<min(start + Self.batchSize, names.count)]
            start = chunk.endIndex
            // The chunk's entries are let go when this returns, before its folders are gone into.
            let folders = try await copyFiles(of: chunk, in: folder, to: backend, at: destination, filtering: filtering,
                                              batching: batching, batch: &batch, skipped: &skipped)
            for (name, target) in folders {
                try Task.checkCancellation()
                let hostPath = folder.path + "/" + name
                // Opened again: what is there now is what is copied (a folder swapped for
                // something else meanwhile is reported, never followed).
                let child: HostItem
                switch try await BlockingIO.run({ _ throws(CofferError) in self.openEntry(name, in: folder) }) {
                case .success(let item) where item.isFolder: child = item
                case .success: skipped.append(ImportSkip(hostPath: hostPath, error: CofferError(.unsupported, detail: "changed")))
                    continue
                case .failure(let error): skipped.append(ImportSkip(hostPath: hostPath, error: error)); continue
                }
                try await backend.createFolder(at: target)
                await carryAttributes(of: child, to: backend, at: target)
                let keepFiltering = filtering && !registry.isPackage(folderNamed: name)
                try await copyContents(of: child, to: backend, at: target, filtering: keepFiltering, skipped: &skipped)
                progress.advance(items: 1)
            }
        }
    }

    /// Opens the entries `chunk` names in `folder` and copies the files among them (into a
    /// local folder being built, in batches); returns the folders, to be gone into once these
    /// descriptors are let go.
    private func copyFiles(of chunk: ArraySlice<[CChar]>, in folder: HostItem, to backend: any StorageBackend,
                           at destination: VirtualPath, filtering: Bool, batching: (any DescriptorTree)?,
                           batch: inout [ReceivedHostFile],
                           skipped: inout [ImportSkip]) async throws -> [(name: String, target: VirtualPath)] {
        let entries = try await BlockingIO.run { _ throws(CofferError) in
            chunk.map { raw -> (String, Result<HostItem, CofferError>) in
                // A name that is not UTF-8 cannot become a sandbox name: reported, never guessed at.
                guard let name = raw.withUnsafeBufferPointer({ String(validatingCString: $0.baseAddress!) }) else {
                    let shown = String(decoding: raw.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    return (shown, .failure(CofferError(.invalidName, detail: "not-utf8")))
                }
                return (name, self.openEntry(name, in: folder))
            }
        }
        var folders: [(name: String, target: VirtualPath)] = []
        for (name, opened) in entries {
            try Task.checkCancellation()
            let hostPath = folder.path + "/" + name
            let child: HostItem
            switch opened {
            case .success(let item): child = item
            case .failure(let error): skipped.append(ImportSkip(hostPath: hostPath, error: error)); continue
            }
            let target: VirtualPath
            do throws(CofferError) {
                target = try destination.appending(name)
            } catch {
                // Reported with the name as it was (too long, or the form of Coffer's partials).
                skipped.append(ImportSkip(hostPath: hostPath, error: CofferError(.invalidName, detail: error.detail)))
                continue
            }
            if filtering {
                do throws(CofferError) {
                    try checkType(of: child)
                } catch {
                    progress.advance(bytes: child.size, items: 1)
                    skipped.append(ImportSkip(hostPath: hostPath, error: error))
                    continue
                }
            }
            if child.isFolder {
                folders.append((name, target))
            } else if let local = batching {
                batch.append(ReceivedHostFile(
                    source: child.descriptor, item: hostPath, name: name,
                    permissions: Self.permissions(of: child), modificationDate: child.modificationDate))
                if batch.count == Self.batchSize { try await receive(&batch, into: local, at: destination, skipped: &skipped) }
            } else {
                do {
                    try await copyFile(child, to: backend, at: target, conflict: .fail)
                } catch let error as CofferError where Self.skippable.contains(error.kind) {
                    skipped.append(ImportSkip(hostPath: hostPath, error: error))
                }
            }
        }
        if let local = batching, !batch.isEmpty {
            try await receive(&batch, into: local, at: destination, skipped: &skipped)
        }
        return folders
    }

    /// Files of one folder handed over together (what thousands of small files cost is mostly
    /// the hand-overs), up to this many at a time.
    static let batchSize = 256

    /// Writes `batch` into `destination`, a folder being built, and empties it.
    private func receive(_ batch: inout [ReceivedHostFile], into local: any DescriptorTree,
                         at destination: VirtualPath, skipped: inout [ImportSkip]) async throws {
        let files = batch
        batch.removeAll(keepingCapacity: true)
        do {
            for (index, error) in try await local.receive(files, into: destination, skipping: Self.skippable, progress: progress) {
                skipped.append(ImportSkip(hostPath: files[index].item, error: error))
            }
        } catch {
            throw CofferError.wrapping(error, path: destination)
        }
    }

    /// The permissions an imported file gets: its own, always readable and writable by its owner.
    private static func permissions(of item: HostItem) -> UInt16 { UInt16(item.info.mode & 0o777) | 0o600 }

    /// Failures that leave one file out of a folder rather than ending the import.
    private static let skippable: Set<CofferError.Kind> = [.noPermission, .noSuchFile, .unsupported, .ioError]

    /// Opens an entry of a host folder. Plain entries are opened without following
    /// anything; a link is followed only where the policy allows, and only to a file.
    private func openEntry(_ name: String, in folder: HostItem) -> Result<HostItem, CofferError> {
        Result { () throws(CofferError) -> HostItem in
            var info = coffer_stat()
            guard coffer_statx(folder.descriptor.raw, name, &info) == 0 else {
                throw CofferError.lastSystemError("statx", path: nil)
            }
            let path = folder.path + "/" + name
            switch FileMode(info.mode) {
            case .regular, .directory:
                let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
                let fd = openat(folder.descriptor.raw, name, flags)
                guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: nil) }
                let item = try HostItem(descriptor: Descriptor(fd), path: path, name: name)
                // Importing a folder that holds the container must not copy the container into itself.
                if item.isFolder && policy.isExcluded(item) { throw CofferError(.hostAccessDenied, detail: name) }
                return item
            case .symbolicLink:
                let target = try policy.open(path)
                // A link to a folder could loop back on its own parent: never walked.
                if target.isFolder { throw CofferError(.unsupported, detail: "link-to-folder") }
                return try HostItem(descriptor: target.descriptor, path: target.path, name: name)
            case .fifo, .socket, .device:
                throw CofferError(.unsupported)
            }
        }
    }

    /// Gives a folder made in `backend` the `user.` attributes of the host folder it copies
    /// (a file's travel with its content), reporting those it cannot keep.
    private func carryAttributes(of folder: HostItem, to backend: any StorageBackend, at path: VirtualPath) async {
        let descriptor = folder.descriptor
        let attributes = (try? await BlockingIO.run { _ throws(CofferError) in
            ExtendedAttributes.userAttributes(of: descriptor.raw)
        }) ?? [:]
        OperationWarnings.report(attributesOf: folder.path, lost: await backend.keep(attributes, at: path))
    }

    private func copyFile(_ item: HostItem, to backend: any StorageBackend, at destination: VirtualPath,
                          conflict: ConflictPolicy) async throws {
        let permissions = Self.permissions(of: item)
        if let local = backend as? any DescriptorTree {
            // One hand-over a file: what thousands of small files cost is mostly the hand-overs.
            do {
                try await local.receive(item.descriptor, reportingAs: item.path, at: destination, permissions: permissions,
                                        modificationDate: item.modificationDate, conflict: conflict, progress: progress)
            } catch {
                throw CofferError.wrapping(error, path: destination)
            }
            progress.advance(items: 1)
            return
        }
        let writer = try await backend.makeWrite(at: destination)
        do {
            if let local = writer as? LocalPendingWrite {
                try await local.fill(from: item.descriptor, reportingAs: item.path, progress: progress)
            } else {
                let descriptor = item.descriptor
                let attributes = (try? await BlockingIO.run { _ throws(CofferError) in
                    ExtendedAttributes.userAttributes(of: descriptor.raw)
                }) ?? [:]
                if !attributes.isEmpty {
                    OperationWarnings.report(attributesOf: item.path, lost: await writer.setUserAttributes(attributes))
                }
                var offset: Int64 = 0
                while true {
                    try Task.checkCancellation()
                    let (descriptor, position) = (item.descriptor, offset)
                    let chunk = try await BlockingIO.run { _ throws(CofferError) in
                        try descriptor.read(at: position, length: Self.chunkSize)
                    }
                    if chunk.isEmpty { break }
                    try await writer.write(chunk)
                    offset += Int64(chunk.count)
                    progress.advance(bytes: Int64(chunk.count))
                }
            }
            try await writer.setAttributes(permissions: permissions, modificationDate: item.modificationDate)
            try await writer.commit(conflict: conflict)
            progress.advance(items: 1)
        } catch {
            await writer.abort()
            throw CofferError.wrapping(error, path: destination)
        }
    }
}
