public import Foundation

extension StorageBackend {
    public func copyItem(at source: VirtualPath, to destination: VirtualPath, conflict: ConflictPolicy,
                         progress: ProgressReporter) async throws {
        try await StreamingCopy.copy(from: self, at: source, to: self, at: destination,
                                     conflict: conflict, progress: progress)
    }
}

/// Copies between any two backends through their read and write handles.
///
/// A folder is built under a hidden temporary name beside the destination and moved
/// into place at the end, so a failed or cancelled copy leaves nothing visible; the
/// partial tree is removed. Links, pipes, sockets and devices are skipped.
public enum StreamingCopy {
    /// Bytes per read.
    static let chunkSize = 1 << 20

    /// Copies the item at `source` of `sourceBackend` to `destination` of
    /// `destinationBackend`, file by file, reporting to `progress`.
    ///
    /// - Parameters:
    ///   - sourceBackend: The backend the item is read from.
    ///   - source: The file or folder to copy.
    ///   - destinationBackend: The backend the copy is written to (may be `sourceBackend`).
    ///   - destination: Where the copy goes; its folder must exist.
    ///   - conflict: What happens when `destination` is taken; `.fail` throws `fileExists`.
    ///   - version: For a conditional save: the version of the file at `destination` the copy is
    ///     to replace (``ExpectedWrite/replacing``).
    ///   - progress: Told the totals first, then each file's bytes and each item as it is done.
    /// - Throws: `fileExists` as above; `cancelled` when the task is cancelled; `invalidOperation`
    ///   for a folder copied onto a mount's root; and what reading the source and writing the
    ///   copy throw. A failed or cancelled copy leaves nothing visible.
    public static func copy(from sourceBackend: any StorageBackend, at source: VirtualPath,
                            to destinationBackend: any StorageBackend, at destination: VirtualPath,
                            conflict: ConflictPolicy, replacing version: FileVersion? = nil,
                            progress: ProgressReporter) async throws {
        let node = try await sourceBackend.node(at: source)
        let totals = try await measure(sourceBackend, node)
        progress.expect(bytes: totals.bytes, items: totals.items)
        if node.kind == .file {
            try await copyFile(node, from: sourceBackend, to: destinationBackend, at: destination,
                               conflict: conflict, replacing: version, progress: progress)
            return
        }
        guard let parent = destination.parent else { throw CofferError(.invalidOperation, path: destination) }
        let temporary = parent.appending(trustedName: PartialName.make())
        try await destinationBackend.createFolder(at: temporary)
        do {
            await carryAttributes(of: node, from: sourceBackend, to: destinationBackend, at: temporary)
            try await copyContents(of: node, from: sourceBackend, into: temporary, of: destinationBackend,
                                   progress: progress)
            progress.advance(items: 1)
            try Task.checkCancellation()
            try await destinationBackend.moveItem(at: temporary, to: destination, conflict: conflict)
        } catch {
            try? await destinationBackend.removeItem(at: temporary)
            throw CofferError.wrapping(error, path: destination).namingPartial(as: destination)
        }
    }

    private static func copyContents(of folder: FileNode, from source: any StorageBackend,
                                     into destination: VirtualPath, of target: any StorageBackend,
                                     progress: ProgressReporter) async throws {
        for child in try await source.contentsOfFolder(at: folder.path) where child.special == nil {
            try Task.checkCancellation()
            let childDestination = destination.appending(trustedName: child.name)
            if child.kind == .file {
                try await copyFile(child, from: source, to: target, at: childDestination, conflict: .fail,
                                   progress: progress)
            } else {
                try await target.createFolder(at: childDestination)
                await carryAttributes(of: child, from: source, to: target, at: childDestination)
                try await copyContents(of: child, from: source, into: childDestination, of: target, progress: progress)
                progress.advance(items: 1)
            }
        }
    }

    private static func copyFile(_ node: FileNode, from source: any StorageBackend, to target: any StorageBackend,
                                 at destination: VirtualPath, conflict: ConflictPolicy, replacing version: FileVersion? = nil,
                                 progress: ProgressReporter) async throws {
        if node.special != nil { throw CofferError(.unsupported, path: node.path) }
        try await copy(source.openFile(at: node.path), named: node.path.description, modified: node.modificationDate,
                       to: target, at: destination, conflict: conflict, replacing: version, progress: progress)
        progress.advance(items: 1)
    }

    /// Copies the file `reader` is open on — its content from where it stands and its `user.`
    /// attributes — to `destination` of `target`, dated `modified`, then closes the reader:
    /// a file that is not a backend's item (a version kept in a mount's own storage) copied
    /// as ``copy(from:at:to:at:conflict:replacing:progress:)`` copies a file. `named` is what
    /// a warning about attributes the target cannot keep calls it.
    /// - Throws: as that copy does; nothing is left at `destination` when it fails.
    public static func copy(_ reader: any ReadableFile, named: String, modified: Date,
                            to target: any StorageBackend, at destination: VirtualPath, conflict: ConflictPolicy,
                            replacing version: FileVersion? = nil, progress: ProgressReporter = .none) async throws {
        let writer: any PendingWrite
        do {
            writer = try await target.makeWrite(
                at: destination, announcing: ExpectedWrite(size: reader.size, modificationDate: modified, replacing: version))
        } catch {
            await reader.close()
            throw error
        }
        do {
            let attributes = await reader.userAttributes()
            if !attributes.isEmpty {
                OperationWarnings.report(attributesOf: named, lost: await writer.setUserAttributes(attributes))
            }
            try await pour(reader, into: writer, progress: progress)
            await reader.close()
            try await writer.setAttributes(permissions: nil, modificationDate: modified)
            try await writer.commit(conflict: conflict)
        } catch {
            await reader.close()
            await writer.abort()
            throw CofferError.wrapping(error, path: destination)
        }
    }

    /// Gives the folder made at `path` the `user.` attributes of `folder`, reporting those the
    /// target cannot keep (it keeps none unless it is an ``AttributeKeepingBackend``).
    private static func carryAttributes(of folder: FileNode, from source: any StorageBackend,
                                        to target: any StorageBackend, at path: VirtualPath) async {
        guard let source = source as? any AttributeKeepingBackend,
              let attributes = try? await source.userAttributes(at: folder.path), !attributes.isEmpty else { return }
        OperationWarnings.report(attributesOf: folder.path.description, lost: await target.keep(attributes, at: path))
    }

    /// The rest of what `reader` holds, from where it stands, written to `writer` a chunk at
    /// a time: a copy's content, or the old content of a file an append writes anew.
    /// - Throws: `CancellationError` between chunks once the task is cancelled.
    public static func pour(_ reader: any ReadableFile, into writer: any PendingWrite,
                            progress: ProgressReporter = .none) async throws {
        while true {
            try Task.checkCancellation()
            let chunk = try await reader.read(upTo: chunkSize)
            if chunk.isEmpty { return }
            try await writer.write(chunk)
            progress.advance(bytes: Int64(chunk.count))
        }
    }

    /// Bytes and items under `node` (links and special files not counted).
    public static func measure(_ backend: any StorageBackend, _ node: FileNode) async throws -> (bytes: Int64, items: Int) {
        if node.special != nil { return (0, 0) }
        if node.kind == .file { return (node.size, 1) }
        var bytes: Int64 = 0
        var items = 1
        for child in try await backend.contentsOfFolder(at: node.path) {
            let (childBytes, childItems) = try await measure(backend, child)
            bytes += childBytes
            items += childItems
        }
        return (bytes, items)
    }
}
