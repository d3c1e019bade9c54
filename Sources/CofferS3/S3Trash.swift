public import CofferCore
import CofferHTTP
import CofferRuntime
public import Foundation

/// The bucket's own trash, laid out as the freedesktop.org specification lays out the trash
/// of a volume (`$topdir/.Trash-$uid`), the bucket being the volume: `.Trash-UID/files/ID`
/// holds the item (a folder's objects under `files/ID/`) and `.Trash-UID/info/ID.trashinfo`
/// its information, with `Path` the key it had, relative to the bucket. Items move in and
/// out by copies on the server, so nothing crosses the network; mounts of different
/// prefixes of one bucket share the trash and each lists the items that came from it.
///
/// Trashing writes the information first (`If-None-Match: *` claims the ID), then copies the
/// item and deletes the original: interrupted, the item is at its place, or at both; never
/// lost. Restoring copies it back, deletes the trashed copy, then the information.
extension S3Backend: TrashCopyingBackend {
    /// `.Trash-UID/`, at the top of the bucket.
    var trashPrefix: String { ".Trash-\(getuid())/" }

    public func trash(_ paths: [VirtualPath]) async -> [Result<TrashItem, CofferError>] {
        (try? await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            paths.map { path in Result { () throws(CofferError) -> TrashItem in try self.trashSync(path) } }
        }) ?? paths.map { _ in .failure(CofferError(.cancelled)) }
    }

    func trashSync(_ path: VirtualPath, keepingOriginal: Bool = false) throws(CofferError) -> TrashItem {
        guard !path.isRoot else { throw CofferError(.invalidOperation, path: path) }
        let node = try nodeSync(path)
        let original = key(path)
        let info = TrashInfo(path: original, deletionDate: Date(), virtualPath: path)
        let infoText = Array(info.text.utf8)
        let claimed = try UniqueName.claim(TrashInfo.idBase(for: path.name), limit: 1000) { (candidate) throws(CofferError) -> String? in
            do throws(CofferError) {
                try client.put(trashPrefix + "info/" + candidate + TrashInfo.suffix, body: .bytes(infoText),
                               contentType: "text/plain", condition: .absent)
                return candidate
            } catch where error.kind == .fileExists {
                return nil
            }
        }
        guard let id = claimed else { throw CofferError(.fileExists, path: path) }
        let destination = trashPrefix + "files/" + id
        let infoKey = trashPrefix + "info/" + id + TrashInfo.suffix
        do throws(CofferError) {
            if node.kind == .file {
                try copyObject(from: original, to: destination, size: node.size)
                if !keepingOriginal { try client.delete(original) }
            } else if keepingOriginal {
                throw CofferError(.isADirectory, path: path)
            } else {
                try moveObjects(from: folderKey(path), to: destination + "/")
            }
        } catch {
            // A trash entry is left only for what reached the trash: a file whose copy failed,
            // or a folder none of whose objects moved, leaves nothing behind in the bucket.
            let reached = node.kind == .file
                ? (try? client.head(destination)) != nil && !keepingOriginal && (try? client.head(original)) == nil
                : ((try? client.list(prefix: destination + "/", delimiter: nil, maxKeys: 1))?.objects.isEmpty == false)
            if !reached {
                if node.kind == .file { try? client.delete(destination) }
                try? client.delete(infoKey)
            }
            throw error
        }
        return TrashItem(id: id, originalPath: path, deletionDate: info.deletionDate,
                         node: trashedNode(id, kind: node.kind, size: node.size, modified: node.modificationDate),
                         size: node.kind == .file ? node.size : nil)
    }

    public func trashCopy(of path: VirtualPath) async throws(CofferError) -> TrashItem {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.trashSync(path, keepingOriginal: true) }
    }

    public func discardTrashCopy(_ id: String) async throws(CofferError) {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            try self.client.delete(self.trashPrefix + "files/" + id)
            try self.client.delete(self.trashPrefix + "info/" + id + TrashInfo.suffix)
        }
    }

    public func trashListing(mount: String) async throws(CofferError) -> TrashListing {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.trashListingSync(mount: mount) }
    }

    /// One listing of the information files and one of the items, then each information
    /// file (a few hundred bytes) of this mount's prefix.
    func trashListingSync(mount: String) throws(CofferError) -> TrashListing {
        let infos = try allObjects(under: trashPrefix + "info/")
        let files = try allObjects(under: trashPrefix + "files/")
        // The size of each item: a file's, or the sum of a folder's objects.
        var sizes: [String: (size: Int64, isFolder: Bool, modified: Date)] = [:]
        for object in files {
            let rest = object.key.dropFirst(trashPrefix.count + "files/".count)
            let id = String(rest.prefix { $0 != "/" })
            let isFolder = rest.count > id.count
            sizes[id, default: (0, isFolder, object.modified)].size += object.size
        }
        var items: [TrashItem] = []
        var problems: [TrashProblem] = []
        for object in infos where object.key.hasSuffix(TrashInfo.suffix) {
            let id = String(object.key.dropFirst(trashPrefix.count + "info/".count).dropLast(TrashInfo.suffix.count))
            guard !id.isEmpty, !id.contains("/") else { continue }
            guard let info = try readInfo(id) else {
                problems.append(TrashProblem(id: id, reason: .damagedInfo))
                continue
            }
            guard let original = originalPath(info, mount: mount) else { continue }  // another prefix's
            guard let held = sizes[id] else {
                problems.append(TrashProblem(id: id, reason: .missingItem))
                continue
            }
            items.append(TrashItem(id: id, originalPath: original, deletionDate: info.deletionDate,
                                   node: trashedNode(id, kind: held.isFolder ? .folder : .file, size: held.size, modified: held.modified),
                                   size: held.size))
        }
        items.sort { ($0.deletionDate ?? .distantPast, $0.id) < ($1.deletionDate ?? .distantPast, $1.id) }
        return TrashListing(items: items, problems: problems)
    }

    public func trashedItem(_ id: String, mount: String) async throws(CofferError) -> TrashItem {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.trashedItemSync(id, mount: mount) }
    }

    func trashedItemSync(_ id: String, mount: String) throws(CofferError) -> TrashItem {
        let missing = CofferError(.noSuchFile, path: VirtualPath.root(of: "trash").appending(trustedName: mount)
            .appending(trustedName: FileName.problem(with: id) == nil ? id : "?"))
        guard FileName.problem(with: id) == nil, let info = try readInfo(id),
              let original = originalPath(info, mount: mount) else { throw missing }
        let destination = trashPrefix + "files/" + id
        if let object = try client.head(destination) {
            return TrashItem(id: id, originalPath: original, deletionDate: info.deletionDate,
                             node: trashedNode(id, kind: .file, size: object.size, modified: object.modified), size: object.size)
        }
        let objects = try allObjects(under: destination + "/")
        guard !objects.isEmpty else { throw missing }
        let size = objects.reduce(0) { $0 + $1.size }
        return TrashItem(id: id, originalPath: original, deletionDate: info.deletionDate,
                         node: trashedNode(id, kind: .folder, size: size, modified: .distantPast), size: size)
    }

    public func restoreTrashed(_ id: String, to target: VirtualPath) async throws(CofferError) {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            let item = try self.trashedItemSync(id, mount: target.mount)
            if (try? self.nodeSync(target)) != nil { throw CofferError(.fileExists, path: target) }
            let source = self.trashPrefix + "files/" + id
            if item.node.kind == .file {
                try self.copyObject(from: source, to: self.key(target), size: item.node.size)
                try self.client.delete(source)
            } else {
                try self.moveObjects(from: source + "/", to: self.folderKey(target))
            }
            try self.client.delete(self.trashPrefix + "info/" + id + TrashInfo.suffix)
        }
    }

    public func emptyTrash(mount: String, olderThan cutoff: Date?) async throws(CofferError) -> Int {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            var emptied = 0
            for item in try self.trashListingSync(mount: mount).items where item.isEmptied(olderThan: cutoff) {
                try self.discardTrashed(item.id, contents: try self.contentKeys(of: item.id, isFile: item.node.kind == .file))
                emptied += 1
            }
            return emptied
        }
    }

    public func deleteTrashed(_ id: String) async throws(CofferError) {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            let isFile = try self.client.head(self.trashPrefix + "files/" + id) != nil
            let contents = try self.contentKeys(of: id, isFile: isFile)
            // Information without its content still goes: it names an item of this trash.
            if contents.isEmpty, try self.readInfo(id) == nil { throw CofferError(.noSuchFile) }
            try self.discardTrashed(id, contents: contents)
        }
    }

    /// The keys holding the content of the trashed item `id`: a file's one object, or every
    /// object of a folder's.
    private func contentKeys(of id: String, isFile: Bool) throws(CofferError) -> [String] {
        let source = trashPrefix + "files/" + id
        return isFile ? [source] : try allObjects(under: source + "/").map(\.key)
    }

    /// Deletes `contents`, the objects of the trashed item `id`, then its information: the
    /// order the trash specification asks for.
    private func discardTrashed(_ id: String, contents: [String]) throws(CofferError) {
        for key in contents { try client.delete(key) }
        try client.delete(trashPrefix + "info/" + id + TrashInfo.suffix)
    }

    /// The information file of `id`; `nil` when there is none or it cannot be read as one.
    private func readInfo(_ id: String) throws(CofferError) -> TrashInfo? {
        var bytes: [UInt8] = []
        do throws(CofferError) {
            try client.get(trashPrefix + "info/" + id + TrashInfo.suffix) { piece in
                bytes += piece
                return bytes.count <= 65_536
            }
        } catch where error.kind == .noSuchFile || error.kind == .cancelled {
            return nil
        }
        return String(validating: bytes, as: UTF8.self).flatMap(TrashInfo.init(parsing:))
    }

    /// Where an item whose information says `info` goes back to in the mount `mount`; `nil`
    /// when it came from outside this mount's prefix.
    private func originalPath(_ info: TrashInfo, mount: String) -> VirtualPath? {
        let prefix = client.configuration.location.prefix
        guard info.path.hasPrefix(prefix), info.path.count > prefix.count else { return nil }
        var path = VirtualPath.root(of: mount)
        var folderKey = prefix
        for raw in info.path.dropFirst(prefix.count).split(separator: "/").map(String.init) {
            // A key's name Coffer cannot show as it is goes by its safe name, which leads back to it.
            guard let name = names.shown(raw, in: folderKey) else { return nil }
            path = path.appending(trustedName: name)
            folderKey += raw + "/"
        }
        return path
    }

    private func trashedNode(_ id: String, kind: FileNode.Kind, size: Int64, modified: Date) -> FileNode {
        FileNode(path: VirtualPath.root(of: "trash").appending(trustedName: id), kind: kind, size: size,
                 modificationDate: modified, isHidden: FileNode.isDotName(id),
                 typeIdentifier: kind == .file ? registry.typeIdentifier(forFileNamed: id) : FileType.Identifier.folder)
    }
}
