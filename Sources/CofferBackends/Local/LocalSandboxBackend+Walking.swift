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

    /// The folders are read on every core: a walk spends most of its time in the kernel's
    /// `getdents`, and folders are independent.
    public func entries(inFoldersAt paths: [VirtualPath]) async -> [Result<[FolderEntry], CofferError>] {
        let results = try? await BlockingIO.run { _ throws(CofferError) in
            let slots = Slots<Result<[FolderEntry], CofferError>>(count: paths.count)
            DispatchQueue.concurrentPerform(iterations: paths.count) { index in
                let path = paths[index]
                slots[index] = Result { () throws(CofferError) in try self.entriesSync(in: self.openFolder(at: path), at: path) }
            }
            return slots.values.map { $0! }
        }
        return results ?? paths.map { .failure(CofferError(.cancelled, path: $0)) }
    }

    public func nodes(at paths: [VirtualPath]) async -> [FileNode?] {
        let nodes = try? await BlockingIO.run { _ throws(CofferError) -> [FileNode?] in
            // Large batches are split over the cores; within a slice, items of one folder
            // (the usual case) share the open folder and its `.hidden`.
            let slices = paths.count >= 64 ? ProcessInfo.processInfo.activeProcessorCount : 1
            let results = Slots<[FileNode?]>(count: slices)
            DispatchQueue.concurrentPerform(iterations: slices) { slice in
                let range = (paths.count * slice / slices)..<(paths.count * (slice + 1) / slices)
                var folder: (path: VirtualPath, descriptor: Descriptor, hidden: HiddenList)?
                results[slice] = paths[range].map { path -> FileNode? in
                    guard let parent = path.parent else { return try? self.nodeSync(at: path) }
                    if folder?.path != parent {
                        guard let descriptor = try? self.openFolder(at: parent) else { return nil }
                        folder = (parent, descriptor, HiddenList(folder: descriptor))
                    }
                    guard let folder else { return nil }
                    return try? self.entryNode(in: folder.descriptor, name: path.name, path: path, hidden: folder.hidden)
                }
            }
            return results.values.flatMap { $0! }
        }
        return nodes ?? paths.map { _ in nil }
    }

    /// Results filled in by concurrent workers, one slot each.
    private final class Slots<Value>: @unchecked Sendable {
        private(set) var values: [Value?]
        private let lock = NSLock()
        init(count: Int) { values = Array(repeating: nil, count: count) }
        subscript(index: Int) -> Value? {
            get { lock.withLock { values[index] } }
            set { lock.withLock { values[index] = newValue } }
        }
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

    /// Split over the cores for long lists (the index asks about every folder it holds).
    public func folderModificationDates(at paths: [VirtualPath]) async throws -> [Date?] {
        try await BlockingIO.run { _ throws(CofferError) in
            let slices = paths.count >= 256 ? ProcessInfo.processInfo.activeProcessorCount : 1
            let results = Slots<[Date?]>(count: slices)
            DispatchQueue.concurrentPerform(iterations: slices) { slice in
                let range = (paths.count * slice / slices)..<(paths.count * (slice + 1) / slices)
                results[slice] = paths[range].map { path in
                    guard let folder = try? self.openFolder(at: path) else { return nil }
                    var info = coffer_stat()
                    guard coffer_fstat(folder.raw, &info) == 0 else { return nil }
                    return Date(timeIntervalSince1970: Double(info.mtime_sec) + Double(info.mtime_nsec) / 1e9)
                }
            }
            return results.values.flatMap { $0! }
        }
    }
}
