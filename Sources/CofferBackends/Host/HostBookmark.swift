import CCofferSystem
public import CofferCore
import CofferRuntime
public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension HostBookmark {
    /// A bookmark of `item`, which the host access policy opened; `openedAs` is the path the
    /// caller named it by, remembered when that is a symbolic link (saves then keep the link).
    public init(id: Int, item: HostItem, createdAt: Date = Date(), openedAs given: String? = nil) {
        self.init(id: id, hostPath: item.path, device: item.device, inode: item.inode, creationDate: item.creationDate,
                  size: item.size, modificationDate: item.modificationDate, createdAt: createdAt)
        if let given {
            var info = stat()
            if lstat(given, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                linkPath = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
            }
        }
    }

    /// Whether `item` is the file this bookmark remembers (not merely one at the same path).
    public func identifies(_ item: HostItem) -> Bool {
        guard item.device == device, item.inode == inode, !item.isFolder else { return false }
        if let creationDate, let other = item.creationDate { return abs(creationDate.timeIntervalSince(other)) < 0.001 }
        return true
    }

    /// This bookmark with the size, time and path of `item`.
    public func updated(with item: HostItem) -> HostBookmark {
        var copy = self
        copy.hostPath = item.path
        copy.size = item.size
        copy.modificationDate = item.modificationDate
        return copy
    }

    /// Finds the remembered file: at its path, or renamed inside the same folder.
    ///
    /// - Throws: `staleBookmark` when it was deleted, or replaced by another file with the
    ///   same name; the policy's and the system's errors otherwise.
    public func locate(using policy: HostAccessPolicy) throws(CofferError) -> HostItem {
        do throws(CofferError) {
            let item = try policy.open(hostPath)
            guard identifies(item) else { throw CofferError(.staleBookmark, detail: name) }
            return item
        } catch where error.kind == .noSuchFile {
            // Gone from its path: look for it under another name in the same folder.
        }
        let folderPath = (hostPath as NSString).deletingLastPathComponent
        guard let folder = try? policy.open(folderPath), folder.isFolder,
              let names = try? folder.descriptor.entryNames(reporting: nil)
        else { throw CofferError(.staleBookmark, detail: name) }
        for candidate in names {
            var info = coffer_stat()
            guard coffer_statx(folder.descriptor.raw, candidate, &info) == 0,
                  info.inode == inode, info.device == device,
                  let item = try? policy.open(folder.path == "/" ? "/" + candidate : folder.path + "/" + candidate),
                  identifies(item)
            else { continue }
            return item
        }
        throw CofferError(.staleBookmark, detail: name)
    }
}

/// A bookmarked host file while access to it is granted.
///
/// Handed to the body of `FileService.withAccess(to:_:)` and closed when the body returns,
/// whichever way it returns; reading afterwards fails. Code cannot forget to give access back.
public final class HostFileAccess: HostFileReading {
    public let bookmark: HostBookmark
    private let file: ManagedDescriptor

    public let version: FileVersion

    init(bookmark: HostBookmark, item: HostItem) {
        self.bookmark = bookmark
        self.file = ManagedDescriptor(item.descriptor)
        self.version = item.version
    }

    public var size: Int64 { bookmark.size }

    /// Up to `length` bytes from `offset`; fewer at the end of the file.
    public func read(offset: Int64, length: Int) async throws(CofferError) -> [UInt8] {
        guard let descriptor = file.current else { throw CofferError(.invalidOperation, detail: "access ended") }
        return try await BlockingIO.run { _ throws(CofferError) in
            try descriptor.read(at: offset, length: length)
        }
    }

    /// Ends access; later reads fail.
    func revoke() { file.release() }
}

extension HostBookmark {
    /// Runs `body` with `item` (what ``locate(using:)`` found) open, and closes it afterwards.
    public nonisolated(nonsending) func withAccess<T>(to item: HostItem,
                                                      _ body: (HostFileAccess) async throws -> T) async throws -> T {
        let access = HostFileAccess(bookmark: updated(with: item), item: item)
        defer { access.revoke() }
        return try await body(access)
    }
}

/// A descriptor that can be let go of once, by whoever holds the grant.
///
/// Its locking is kept out of line (`@inline(never)`). Inlined into the async function that
/// awaits the grant's body, an optimised build locked the mutex with the thread before the
/// `await` and unlocked it from the thread after it, stopping with “Call to unlock Mutex on
/// a thread which hasn't acquired the lock” (issue 30); the release-build end-to-end tests
/// run this path.
private final class ManagedDescriptor: Sendable {
    private let state: Mutex<Descriptor?>
    init(_ descriptor: Descriptor) { state = Mutex(descriptor) }

    var current: Descriptor? {
        @inline(never) get { state.withLock { $0 } }
    }

    @inline(never)
    func release() {
        // Taken out under the lock, closed (its last reference gone) after it.
        let released = state.withLock { held -> Descriptor? in
            defer { held = nil }
            return held
        }
        withExtendedLifetime(released) {}
    }
}
