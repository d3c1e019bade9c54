import CCofferSystem
import CofferCore
import CofferRuntime
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A file being written under a hidden temporary name in its destination folder.
///
/// The destination folder is held open from the start, so the file lands in the folder
/// that was asked for even if that folder is renamed or swapped for a link meanwhile.
///
/// Made `inPlace`, it is written at its own name instead, created exclusively: only for a
/// folder nobody sees yet (one being built under a partial name, placed once it is whole),
/// where a hidden name per file would cost a rename each and hide nothing more.
final class LocalPendingWrite: PendingWrite {
    private struct State {
        var file: Descriptor?
        var finished = false
    }

    private let folder: Descriptor
    private let temporaryName: String
    private let finalName: String
    private let path: VirtualPath
    private let sync: Bool
    /// Written at its own name, with no rename at the end.
    private let inPlace: Bool
    private let state: Mutex<State>

    init(folder: Descriptor, finalName: String, path: VirtualPath, sync: Bool, mode: mode_t = 0o666,
         inPlace: Bool = false) throws(CofferError) {
        self.folder = folder
        self.finalName = finalName
        self.path = path
        self.sync = sync
        self.inPlace = inPlace
        self.temporaryName = inPlace ? finalName : PartialName.make()
        let fd = openat(folder.raw, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw CofferError.lastSystemError("openat", path: path) }
        self.state = Mutex(State(file: Descriptor(fd)))
    }

    private func openFile() throws(CofferError) -> Descriptor {
        guard let file = state.withLock({ $0.finished ? nil : $0.file }) else {
            throw CofferError(.invalidOperation, path: path)
        }
        return file
    }

    func write(_ bytes: [UInt8]) async throws {
        let file = try openFile()
        let path = self.path
        try await BlockingIO.run { _ throws(CofferError) in
            try WriteAll.bytes(bytes, to: file.raw, path: path)
        }
    }

    /// Copies the rest of `source` into the file in the kernel (`copy_file_range`), and its
    /// `user.` attributes (an import keeps a file's tags), reporting those not kept as
    /// attributes of `item`.
    func fill(from source: Descriptor, reportingAs item: String, progress: ProgressReporter) async throws {
        try await BlockingIO.run { cancellation throws(CofferError) in
            try self.fillNow(from: source, reportingAs: item, progress: progress, cancellation: cancellation)
        }
    }

    /// ``fill(from:reportingAs:progress:)`` on the calling thread (a blocking one).
    func fillNow(from source: Descriptor, reportingAs item: String, progress: ProgressReporter,
                 cancellation: CancellationFlag) throws(CofferError) {
        let file = try openFile()
        try KernelCopy.copy(from: source.raw, to: file.raw, cancellation: cancellation, progress: progress,
                            flush: sync, path: path)
        ExtendedAttributes.copyUserAttributes(from: source.raw, to: file.raw, reportingAs: item)
    }

    /// The whole of a host file written and placed on the calling thread (a blocking one):
    /// filled from `source`, given `permissions` and `modificationDate`, committed with
    /// `conflict`; discarded if any step fails.
    func completeNow(from source: Descriptor, reportingAs item: String, permissions: UInt16, modificationDate: Date,
                     conflict: ConflictPolicy, progress: ProgressReporter, cancellation: CancellationFlag) throws(CofferError) {
        do throws(CofferError) {
            try fillNow(from: source, reportingAs: item, progress: progress, cancellation: cancellation)
            try setAttributesNow(permissions: permissions, modificationDate: modificationDate)
            try commitNow(conflict: conflict)
        } catch {
            discard()
            throw error
        }
    }

    func setUserAttributes(_ attributes: UserAttributes) async -> [LostAttribute] {
        guard let file = try? openFile() else { return [] }
        return (try? await BlockingIO.run { _ throws(CofferError) in
            ExtendedAttributes.setUserAttributes(attributes, on: file.raw)
        }) ?? []
    }


    func setAttributes(permissions: UInt16?, modificationDate: Date?) async throws {
        try setAttributesNow(permissions: permissions, modificationDate: modificationDate)
    }

    func setAttributesNow(permissions: UInt16?, modificationDate: Date?) throws(CofferError) {
        let file = try openFile()
        if let permissions { _ = fchmod(file.raw, mode_t(permissions & 0o7777)) }
        if let modificationDate {
            let seconds = modificationDate.timeIntervalSince1970.rounded(.down)
            let nanoseconds = UInt32((modificationDate.timeIntervalSince1970 - seconds) * 1e9)
            _ = coffer_set_mtime(file.raw, Int64(seconds), nanoseconds)
        }
    }

    func commit(conflict: ConflictPolicy) async throws {
        try await BlockingIO.run { _ throws(CofferError) in try self.commitNow(conflict: conflict) }
    }

    /// ``commit(conflict:)`` on the calling thread (a blocking one).
    func commitNow(conflict: ConflictPolicy) throws(CofferError) {
        let file = try openFile()
        if sync && fdatasync(file.raw) != 0 {
            throw CofferError.lastSystemError("fdatasync", path: path)
        }
        if !inPlace {
            do throws(CofferError) {
                try Placement.place(temporaryName, as: finalName, in: folder, conflict: conflict, path: path)
            } catch {
                discard()
                throw error
            }
        }
        state.withLock { $0 = State(file: nil, finished: true) }
    }

    func abort() async { discard() }

    func discard() {
        let wasOpen = state.withLock { state -> Bool in
            defer { state = State(file: nil, finished: true) }
            return !state.finished
        }
        if wasOpen { _ = unlinkat(folder.raw, temporaryName, 0) }
    }
}

/// Moving a finished temporary item to its real name, in one place for every writer.
enum Placement {
    /// Renames `temporary` to `final` inside `folder`.
    ///
    /// `.fail` (and `.keepBoth`, which the service resolved to a free name) never
    /// overwrites: `renameat2(RENAME_NOREPLACE)`. `.replace` swaps the two atomically
    /// with `RENAME_EXCHANGE`, carries the old item's backup exclusion over, and then
    /// removes the old item. On failure the temporary item is left for the caller to clean.
    static func place(_ temporary: String, as final: String, in folder: Descriptor, conflict: ConflictPolicy,
                      path: VirtualPath) throws(CofferError) {
        try place(temporary, from: folder, as: final, in: folder, conflict: conflict, path: path)
    }

    static func place(_ source: String, from sourceFolder: Descriptor, as final: String, in folder: Descriptor,
                      conflict: ConflictPolicy, path: VirtualPath) throws(CofferError) {
        if coffer_renameat2(sourceFolder.raw, source, folder.raw, final, UInt32(COFFER_RENAME_NOREPLACE)) == 0 {
            return
        }
        let code = errno
        if code == ENOSYS || code == EINVAL {
            // No renameat2 here: check, then rename (not race-free; only on old kernels).
            var info = coffer_stat()
            if coffer_statx(folder.raw, final, &info) == 0 && !conflict.replaces {
                throw CofferError(.fileExists, path: path)
            }
            guard renameat(sourceFolder.raw, source, folder.raw, final) == 0 else {
                throw CofferError.lastSystemError("renameat", path: path)
            }
            return
        }
        guard code == EEXIST, conflict.replaces else {
            throw CofferError.system(code, "renameat2", path: path)
        }
        let excluded = BackupExclusion.isExcluded(in: folder, name: final)
        BackupExclusion.carry(excluded, to: source, in: sourceFolder)
        guard coffer_renameat2(sourceFolder.raw, source, folder.raw, final, UInt32(COFFER_RENAME_EXCHANGE)) == 0 else {
            throw CofferError.lastSystemError("renameat2", path: path)
        }
        // The replaced item now sits under the source name: remove it for good.
        try? RemoveTree.remove(source, in: sourceFolder, path: path)
    }
}

/// Removing a file or a whole folder tree relative to a folder descriptor, never following links.
enum RemoveTree {
    static func remove(_ name: String, in folder: Descriptor, path: VirtualPath) throws(CofferError) {
        let result = name.withCString { raw in
            Result { () throws(CofferError) in try remove(rawName: raw, in: folder, path: path) }
        }
        try result.get()
    }

    /// Works on raw names so that names which are not valid UTF-8 are removed too.
    private static func remove(rawName name: UnsafePointer<CChar>, in folder: Descriptor,
                               path: VirtualPath) throws(CofferError) {
        if unlinkat(folder.raw, name, 0) == 0 { return }
        guard errno == EISDIR || errno == EPERM else { throw CofferError.lastSystemError("unlinkat", path: path) }
        let child = try folder.openFolder(rawName: name, reporting: path)
        for entry in try child.rawEntryNames(reporting: path) {
            let result = entry.withUnsafeBufferPointer { buffer in
                Result { () throws(CofferError) in try remove(rawName: buffer.baseAddress!, in: child, path: path) }
            }
            try result.get()
        }
        guard unlinkat(folder.raw, name, AT_REMOVEDIR) == 0 else {
            throw CofferError.lastSystemError("unlinkat", path: path)
        }
    }
}
