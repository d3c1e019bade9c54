import CCofferSystem
import CofferCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What searches and the search index need from the disk: names and entry types straight
/// from `readdir` (no `statx` per entry), and folders' modification times.
extension LocalSandboxBackend {
    public func entries(inFolderAt path: VirtualPath) async throws -> [FolderEntry] {
        try await BlockingIO.run { _ throws(CofferError) in
            try self.entriesSync(in: self.openFolder(at: path), at: path)
        }
    }

    public func entries(inFoldersAt paths: [VirtualPath]) async -> [Result<[FolderEntry], CofferError>] {
        let results = try? await BlockingIO.run { _ throws(CofferError) in
            paths.map { path in
                Result { () throws(CofferError) in try self.entriesSync(in: self.openFolder(at: path), at: path) }
            }
        }
        return results ?? paths.map { .failure(CofferError(.cancelled, path: $0)) }
    }

    public func nodes(at paths: [VirtualPath]) async -> [FileNode?] {
        let nodes = try? await BlockingIO.run { _ throws(CofferError) -> [FileNode?] in
            // Items of one folder (the usual case) share the folder and its `.hidden`.
            var folder: (path: VirtualPath, descriptor: Descriptor, hidden: HiddenList)?
            return paths.map { path -> FileNode? in
                guard let parent = path.parent else { return try? self.nodeSync(at: path) }
                if folder?.path != parent {
                    guard let descriptor = try? self.openFolder(at: parent) else { return nil }
                    folder = (parent, descriptor, HiddenList(folder: descriptor))
                }
                guard let folder else { return nil }
                return try? self.entryNode(in: folder.descriptor, name: path.name, path: path, hidden: folder.hidden)
            }
        }
        return nodes ?? paths.map { _ in nil }
    }

    func entriesSync(in folder: Descriptor, at path: VirtualPath) throws(CofferError) -> [FolderEntry] {
        guard let stream = coffer_opendir(folder.raw) else { throw CofferError.lastSystemError("opendir", path: path) }
        defer { coffer_closedir(stream) }
        var entries: [FolderEntry] = []
        var hasHiddenList = false
        var type: UInt8 = 0
        while let raw = coffer_readdir(stream, &type) {
            let name = String(cString: raw)
            if name.hasPrefix(StreamingCopy.partialPrefix) { continue }
            if name == HiddenList.fileName { hasHiddenList = true }
            let kind: FolderEntry.Kind
            switch Int32(type) {
            case Int32(DT_DIR): kind = .folder
            case Int32(DT_REG): kind = .file
            case Int32(DT_UNKNOWN):
                // Some file systems give no type: ask for it.
                var info = coffer_stat()
                guard coffer_statx(folder.raw, raw, &info) == 0 else { continue }
                switch FileMode(info.mode) {
                case .directory: kind = .folder
                case .regular: kind = .file
                default: kind = .special
                }
            default: kind = .special
            }
            entries.append(FolderEntry(name: name, kind: kind, isHidden: FileNode.isDotName(name)))
        }
        if errno != 0 { throw CofferError.lastSystemError("readdir", path: path) }
        if hasHiddenList {
            let hidden = HiddenList(folder: folder)
            for index in entries.indices where hidden.contains(entries[index].name) { entries[index].isHidden = true }
        }
        return entries
    }

    public func folderModificationDates(at paths: [VirtualPath]) async throws -> [Date?] {
        try await BlockingIO.run { _ throws(CofferError) in
            paths.map { path in
                guard let folder = try? self.openFolder(at: path) else { return nil }
                var info = coffer_stat()
                guard coffer_fstat(folder.raw, &info) == 0 else { return nil }
                return Date(timeIntervalSince1970: Double(info.mtime_sec) + Double(info.mtime_nsec) / 1e9)
            }
        }
    }
}
