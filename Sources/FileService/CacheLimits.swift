import CofferCore
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How much a container's caches may keep. Thumbnails expire as GNOME's do
/// (`org.gnome.desktop.thumbnail-cache`): those older than ``thumbnailMaxAge`` go, then the
/// oldest until the rest take less than ``thumbnailMaxBytes``. The S3 content cache has its
/// own bound (`S3Transfers.cacheLimit`); downloads are let go by `ClearDownloads`.
public struct CacheLimits: Sendable, Equatable {
    /// Thumbnails last written longer ago than this are removed; `nil` keeps any age.
    public var thumbnailMaxAge: Duration?
    /// The most the thumbnails may take, in bytes; `nil` for no bound.
    public var thumbnailMaxBytes: Int64?

    /// Limits as given; each left out is the standard one (``standard``).
    public init(thumbnailMaxAge: Duration? = Self.standard.thumbnailMaxAge,
                thumbnailMaxBytes: Int64? = Self.standard.thumbnailMaxBytes) {
        self.thumbnailMaxAge = thumbnailMaxAge
        self.thumbnailMaxBytes = thumbnailMaxBytes
    }

    /// GNOME's defaults: 180 days, 512 MB.
    public static let standard = CacheLimits(days: 180, megabytes: 512)

    /// Limits given as GNOME's settings give them: whole days and megabytes, a negative
    /// number for no limit.
    public init(days: Int, megabytes: Int) {
        self.init(thumbnailMaxAge: Self.age(days: days), thumbnailMaxBytes: Self.bytes(megabytes: megabytes))
    }

    /// `days` as an age limit; `nil` (none) when negative.
    public static func age(days: Int) -> Duration? { days < 0 ? nil : .seconds(Int64(days) * 86_400) }

    /// `megabytes` (10⁶ bytes) as a size limit; `nil` (none) when negative.
    public static func bytes(megabytes: Int) -> Int64? { megabytes < 0 ? nil : Int64(megabytes) * 1_000_000 }
}

/// The folders of the thumbnail cache (`Library/Caches/Thumbnails`), in one place for the
/// previewer that fills it and the housekeeping that trims it.
public enum ThumbnailCacheLayout {
    /// One per size of the freedesktop.org standard, smallest first.
    public static let sizeFolders = ["normal", "large", "x-large", "xx-large"]
    /// The files no thumbnail could be made of, in the application's own subfolder.
    public static let failFolder = "fail/coffer-1.0"
    /// Coffer's folder manifests, inside each size's folder.
    public static let manifestFolder = ".coffer-folders"
}

/// What trimming a cache removed.
public struct CacheTrimReport: Sendable, Equatable {
    /// How many files were removed.
    public var removedFiles = 0
    /// How many bytes they took.
    public var removedBytes: Int64 = 0
    /// How many files are left.
    public var keptFiles = 0
    /// How many bytes the files left take.
    public var keptBytes: Int64 = 0
}

/// Trims the freedesktop thumbnail cache of a container (`Library/Caches/Thumbnails`) to
/// ``CacheLimits``: the PNGs of each size folder and of the failures' folder, judged by their
/// modification time (when they were made). When any thumbnail of a size goes, that size's
/// folder manifests (`.coffer-folders`) go too, so no listing trusts them for a file whose
/// thumbnail is gone.
enum ThumbnailCacheTrimmer {
    /// The folders below the cache's root that hold thumbnails.
    static let folders = ThumbnailCacheLayout.sizeFolders + [ThumbnailCacheLayout.failFolder]
    static let manifestFolder = ThumbnailCacheLayout.manifestFolder

    private struct Entry {
        var folder: String
        var name: String
        var modified: Int64
        var size: Int64
    }

    static func trim(_ root: String, to limits: CacheLimits, now: Date = Date()) -> CacheTrimReport {
        var report = CacheTrimReport()
        guard limits.thumbnailMaxAge != nil || limits.thumbnailMaxBytes != nil else { return report }
        var entries: [Entry] = []
        for folder in folders {
            entries += files(in: folder, of: root)
        }
        var doomed: [Entry] = []
        if let age = limits.thumbnailMaxAge {
            let oldest = Int64(now.timeIntervalSince1970) - age.components.seconds
            let (old, young) = (entries.filter { $0.modified < oldest }, entries.filter { $0.modified >= oldest })
            doomed = old
            entries = young
        }
        if let bound = limits.thumbnailMaxBytes {
            var total = entries.reduce(0) { $0 + $1.size }
            entries.sort { ($0.modified, $0.name) < ($1.modified, $1.name) }
            var first = 0
            while total > bound, first < entries.count {
                total -= entries[first].size
                first += 1
            }
            doomed += entries[..<first]
            entries.removeFirst(first)
        }
        var emptied = Set<String>()
        for entry in doomed where unlink("\(root)/\(entry.folder)/\(entry.name)") == 0 || errno == ENOENT {
            report.removedFiles += 1
            report.removedBytes += entry.size
            emptied.insert(entry.folder)
        }
        for folder in emptied where !folder.hasPrefix("fail/") {
            removeManifests(in: "\(root)/\(folder)/\(manifestFolder)")
        }
        if emptied.contains(where: { $0.hasPrefix("fail/") }) {
            // A manifest also remembers failures: drop them all, they are only a shortcut.
            for folder in folders where !folder.hasPrefix("fail/") { removeManifests(in: "\(root)/\(folder)/\(manifestFolder)") }
        }
        report.keptFiles = entries.count
        report.keptBytes = entries.reduce(0) { $0 + $1.size }
        return report
    }

    /// The regular files directly in `folder` of `root` (the thumbnails, and temporary files
    /// of writers), by `readdir` and `fstatat`.
    private static func files(in folder: String, of root: String) -> [Entry] {
        let fd = open("\(root)/\(folder)", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0, let directory = fdopendir(fd) else {
            if fd >= 0 { close(fd) }
            return []
        }
        defer { closedir(directory) }
        var found: [Entry] = []
        while let record = readdir(directory) {
            let name = withUnsafeBytes(of: record.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard name != ".", name != ".." else { continue }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            found.append(Entry(folder: folder, name: name, modified: Int64(info.st_mtim.tv_sec), size: Int64(info.st_size)))
        }
        return found
    }

    private static func removeManifests(in path: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names { unlink("\(path)/\(name)") }
    }
}

/// The thumbnail cache of a service (`Library/Caches/Thumbnails` in a standard container):
/// where the previewer keeps thumbnails, trimmed to its ``CacheLimits`` at the start of the
/// service's background work and every hour after.
public final class ThumbnailCache: ServiceFeature {
    /// The cache's folder, in the freedesktop.org layout (``ThumbnailCacheLayout``).
    public let path: String
    /// How much it may keep.
    public let limits: CacheLimits
    /// How often the cache is trimmed (GNOME's housekeeping: hourly).
    static let trimInterval: Duration = .seconds(3600)

    /// The cache in the host folder `path`, kept within `limits`.
    public init(path: String, limits: CacheLimits = .standard) {
        self.path = path
        self.limits = limits
    }

    /// Trims the cache to its limits, as of `now`.
    @discardableResult
    public func trim(now: Date = Date()) async -> CacheTrimReport {
        let (path, limits) = (path, limits)
        return await Task.detached(priority: .background) {
            ThumbnailCacheTrimmer.trim(path, to: limits, now: now)
        }.value
    }

    /// Trims the cache now and every hour after, until the service's background work stops.
    public func keepUp(_ service: FileService) async {
        while !Task.isCancelled {
            await trim()
            try? await Task.sleep(for: Self.trimInterval)
        }
    }
}
